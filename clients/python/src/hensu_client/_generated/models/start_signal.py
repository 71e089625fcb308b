from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.start_signal_payload import StartSignalPayload





T = TypeVar("T", bound="StartSignal")



@_attrs_define
class StartSignal:
    """ One signal of a start (`signals` of `POST /api/v1/executions`).

        Attributes:
            name (str):
            payload (StartSignalPayload | Unset):
     """

    name: str
    payload: StartSignalPayload | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.start_signal_payload import StartSignalPayload # noqa: PLC0415
        name = self.name

        payload: dict[str, Any] | Unset = UNSET
        if not isinstance(self.payload, Unset):
            payload = self.payload.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
        })
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.start_signal_payload import StartSignalPayload # noqa: PLC0415
        d = dict(src_dict)
        name = d.pop("name")

        _payload = d.pop("payload", UNSET)
        payload: StartSignalPayload | Unset
        if isinstance(_payload,  Unset):
            payload = UNSET
        else:
            payload = StartSignalPayload.from_dict(_payload)




        start_signal = cls(
            name=name,
            payload=payload,
        )

        return start_signal

