from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_6_type import ExecutionEventType6Type
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ExecutionEventType6")



@_attrs_define
class ExecutionEventType6:
    """ A piece of the text the node in flight is writing (docs/server.md, *Token events*):
    live only, never in the run log (the node's output is, on its `execution.step`). Its
    `id:` is `<id of the last log event>.<token number>`.

        Attributes:
            execution_id (str):
            node_id (str):
            sequence (int): 0, 1, … within the node's agent call.
            text (str):
            timestamp (str):
            type_ (ExecutionEventType6Type):
            workflow_id (str):
            branch_id (None | str | Unset): The parallel branch or map item writing.
            dropped (int | Unset): Tokens this stream lost before this one because it read too slowly.
     """

    execution_id: str
    node_id: str
    sequence: int
    text: str
    timestamp: str
    type_: ExecutionEventType6Type
    workflow_id: str
    branch_id: None | str | Unset = UNSET
    dropped: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        node_id = self.node_id

        sequence = self.sequence

        text = self.text

        timestamp = self.timestamp

        type_ = self.type_.value

        workflow_id = self.workflow_id

        branch_id: None | str | Unset
        if isinstance(self.branch_id, Unset):
            branch_id = UNSET
        else:
            branch_id = self.branch_id

        dropped = self.dropped


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "nodeId": node_id,
            "sequence": sequence,
            "text": text,
            "timestamp": timestamp,
            "type": type_,
            "workflowId": workflow_id,
        })
        if branch_id is not UNSET:
            field_dict["branchId"] = branch_id
        if dropped is not UNSET:
            field_dict["dropped"] = dropped

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        node_id = d.pop("nodeId")

        sequence = d.pop("sequence")

        text = d.pop("text")

        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType6Type(d.pop("type"))




        workflow_id = d.pop("workflowId")

        def _parse_branch_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        branch_id = _parse_branch_id(d.pop("branchId", UNSET))


        dropped = d.pop("dropped", UNSET)

        execution_event_type_6 = cls(
            execution_id=execution_id,
            node_id=node_id,
            sequence=sequence,
            text=text,
            timestamp=timestamp,
            type_=type_,
            workflow_id=workflow_id,
            branch_id=branch_id,
            dropped=dropped,
        )


        execution_event_type_6.additional_properties = d
        return execution_event_type_6

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
