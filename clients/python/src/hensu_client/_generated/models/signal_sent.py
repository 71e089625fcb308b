from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="SignalSent")



@_attrs_define
class SignalSent:
    """ What a send did.

        Attributes:
            execution_id (str):
            seq (int): Its number among the execution's signals (0, 1, … in the order they were sent).
            signal (str):
            woke (bool): The execution was waiting for it and continues now; otherwise the signal is kept and
                delivered when the execution waits for its name.
     """

    execution_id: str
    seq: int
    signal: str
    woke: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        seq = self.seq

        signal = self.signal

        woke = self.woke


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "seq": seq,
            "signal": signal,
            "woke": woke,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        seq = d.pop("seq")

        signal = d.pop("signal")

        woke = d.pop("woke")

        signal_sent = cls(
            execution_id=execution_id,
            seq=seq,
            signal=signal,
            woke=woke,
        )


        signal_sent.additional_properties = d
        return signal_sent

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
