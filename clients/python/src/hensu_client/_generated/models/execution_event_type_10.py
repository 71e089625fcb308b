from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_10_type import ExecutionEventType10Type






T = TypeVar("T", bound="ExecutionEventType10")



@_attrs_define
class ExecutionEventType10:
    """ Tenant stream only: the events after the `Last-Event-ID` sent are no longer all held
    (older than the retention window, or an id this store never gave), so the stream
    continues from now and the client should re-read what it shows (docs/server.md,
    *Events*). Its `id:` is where the stream continues from.

        Attributes:
            reason (str):
            timestamp (str):
            type_ (ExecutionEventType10Type):
     """

    reason: str
    timestamp: str
    type_: ExecutionEventType10Type
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        timestamp = self.timestamp

        type_ = self.type_.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "reason": reason,
            "timestamp": timestamp,
            "type": type_,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reason = d.pop("reason")

        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType10Type(d.pop("type"))




        execution_event_type_10 = cls(
            reason=reason,
            timestamp=timestamp,
            type_=type_,
        )


        execution_event_type_10.additional_properties = d
        return execution_event_type_10

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
