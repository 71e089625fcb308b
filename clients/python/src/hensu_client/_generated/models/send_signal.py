from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.send_signal_payload import SendSignalPayload





T = TypeVar("T", bound="SendSignal")



@_attrs_define
class SendSignal:
    """ `POST /api/v1/executions/{id}/signals/{name}`'s body.

        Attributes:
            payload (SendSignalPayload | Unset): The signal's payload (any JSON; `null` when absent).
     """

    payload: SendSignalPayload | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.send_signal_payload import SendSignalPayload # noqa: PLC0415
        payload: dict[str, Any] | Unset = UNSET
        if not isinstance(self.payload, Unset):
            payload = self.payload.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.send_signal_payload import SendSignalPayload # noqa: PLC0415
        d = dict(src_dict)
        _payload = d.pop("payload", UNSET)
        payload: SendSignalPayload | Unset
        if isinstance(_payload,  Unset):
            payload = UNSET
        else:
            payload = SendSignalPayload.from_dict(_payload)




        send_signal = cls(
            payload=payload,
        )

        return send_signal

