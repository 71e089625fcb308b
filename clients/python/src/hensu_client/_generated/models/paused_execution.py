from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="PausedExecution")



@_attrs_define
class PausedExecution:
    """ A paused execution (`GET /api/v1/executions/paused`).

        Attributes:
            created_at (str): When the execution started (RFC 3339, UTC).
            execution_id (str):
            workflow_id (str):
            correlation_id (None | str | Unset): Present when it waits for a review (absent: an external answer).
            current_node_id (None | str | Unset):
     """

    created_at: str
    execution_id: str
    workflow_id: str
    correlation_id: None | str | Unset = UNSET
    current_node_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        execution_id = self.execution_id

        workflow_id = self.workflow_id

        correlation_id: None | str | Unset
        if isinstance(self.correlation_id, Unset):
            correlation_id = UNSET
        else:
            correlation_id = self.correlation_id

        current_node_id: None | str | Unset
        if isinstance(self.current_node_id, Unset):
            current_node_id = UNSET
        else:
            current_node_id = self.current_node_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "createdAt": created_at,
            "executionId": execution_id,
            "workflowId": workflow_id,
        })
        if correlation_id is not UNSET:
            field_dict["correlationId"] = correlation_id
        if current_node_id is not UNSET:
            field_dict["currentNodeId"] = current_node_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("createdAt")

        execution_id = d.pop("executionId")

        workflow_id = d.pop("workflowId")

        def _parse_correlation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        correlation_id = _parse_correlation_id(d.pop("correlationId", UNSET))


        def _parse_current_node_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        current_node_id = _parse_current_node_id(d.pop("currentNodeId", UNSET))


        paused_execution = cls(
            created_at=created_at,
            execution_id=execution_id,
            workflow_id=workflow_id,
            correlation_id=correlation_id,
            current_node_id=current_node_id,
        )


        paused_execution.additional_properties = d
        return paused_execution

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
