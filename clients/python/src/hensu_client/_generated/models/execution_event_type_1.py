from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_1_type import ExecutionEventType1Type
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ExecutionEventType1")



@_attrs_define
class ExecutionEventType1:
    """ A node finished; `nodeId` runs next.

        Attributes:
            execution_id (str):
            timestamp (str):
            type_ (ExecutionEventType1Type):
            workflow_id (str):
            executed_node_id (None | str | Unset): The node that finished.
            node_id (None | str | Unset):
            node_output (Any | Unset): Its output (redacted), any JSON value — an agent's text is a string: what its
                `execution.token` events wrote, whole (docs/server.md, *Token events*).
     """

    execution_id: str
    timestamp: str
    type_: ExecutionEventType1Type
    workflow_id: str
    executed_node_id: None | str | Unset = UNSET
    node_id: None | str | Unset = UNSET
    node_output: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        timestamp = self.timestamp

        type_ = self.type_.value

        workflow_id = self.workflow_id

        executed_node_id: None | str | Unset
        if isinstance(self.executed_node_id, Unset):
            executed_node_id = UNSET
        else:
            executed_node_id = self.executed_node_id

        node_id: None | str | Unset
        if isinstance(self.node_id, Unset):
            node_id = UNSET
        else:
            node_id = self.node_id

        node_output = self.node_output


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "timestamp": timestamp,
            "type": type_,
            "workflowId": workflow_id,
        })
        if executed_node_id is not UNSET:
            field_dict["executedNodeId"] = executed_node_id
        if node_id is not UNSET:
            field_dict["nodeId"] = node_id
        if node_output is not UNSET:
            field_dict["nodeOutput"] = node_output

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType1Type(d.pop("type"))




        workflow_id = d.pop("workflowId")

        def _parse_executed_node_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        executed_node_id = _parse_executed_node_id(d.pop("executedNodeId", UNSET))


        def _parse_node_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node_id = _parse_node_id(d.pop("nodeId", UNSET))


        node_output = d.pop("nodeOutput", UNSET)

        execution_event_type_1 = cls(
            execution_id=execution_id,
            timestamp=timestamp,
            type_=type_,
            workflow_id=workflow_id,
            executed_node_id=executed_node_id,
            node_id=node_id,
            node_output=node_output,
        )


        execution_event_type_1.additional_properties = d
        return execution_event_type_1

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
