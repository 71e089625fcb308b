from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ExecutionForked")



@_attrs_define
class ExecutionForked:
    """ The fork made: a new execution, running in the background from its fork point.

        Attributes:
            execution_id (str):
            node_id (str): The node the fork continues with.
            parent_execution_id (str):
            parent_step (int):
            workflow_id (str):
     """

    execution_id: str
    node_id: str
    parent_execution_id: str
    parent_step: int
    workflow_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        node_id = self.node_id

        parent_execution_id = self.parent_execution_id

        parent_step = self.parent_step

        workflow_id = self.workflow_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "nodeId": node_id,
            "parentExecutionId": parent_execution_id,
            "parentStep": parent_step,
            "workflowId": workflow_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        node_id = d.pop("nodeId")

        parent_execution_id = d.pop("parentExecutionId")

        parent_step = d.pop("parentStep")

        workflow_id = d.pop("workflowId")

        execution_forked = cls(
            execution_id=execution_id,
            node_id=node_id,
            parent_execution_id=parent_execution_id,
            parent_step=parent_step,
            workflow_id=workflow_id,
        )


        execution_forked.additional_properties = d
        return execution_forked

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
