from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_7_type import ExecutionEventType7Type
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ExecutionEventType7")



@_attrs_define
class ExecutionEventType7:
    """ 
        Attributes:
            execution_id (str):
            timestamp (str):
            type_ (ExecutionEventType7Type):
            workflow_id (str):
            node_id (None | str | Unset):
     """

    execution_id: str
    timestamp: str
    type_: ExecutionEventType7Type
    workflow_id: str
    node_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        timestamp = self.timestamp

        type_ = self.type_.value

        workflow_id = self.workflow_id

        node_id: None | str | Unset
        if isinstance(self.node_id, Unset):
            node_id = UNSET
        else:
            node_id = self.node_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "timestamp": timestamp,
            "type": type_,
            "workflowId": workflow_id,
        })
        if node_id is not UNSET:
            field_dict["nodeId"] = node_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType7Type(d.pop("type"))




        workflow_id = d.pop("workflowId")

        def _parse_node_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node_id = _parse_node_id(d.pop("nodeId", UNSET))


        execution_event_type_7 = cls(
            execution_id=execution_id,
            timestamp=timestamp,
            type_=type_,
            workflow_id=workflow_id,
            node_id=node_id,
        )


        execution_event_type_7.additional_properties = d
        return execution_event_type_7

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
