from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_0_type import ExecutionEventType0Type






T = TypeVar("T", bound="ExecutionEventType0")



@_attrs_define
class ExecutionEventType0:
    """ 
        Attributes:
            execution_id (str):
            tenant_id (str):
            timestamp (str):
            type_ (ExecutionEventType0Type):
            workflow_id (str):
     """

    execution_id: str
    tenant_id: str
    timestamp: str
    type_: ExecutionEventType0Type
    workflow_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        tenant_id = self.tenant_id

        timestamp = self.timestamp

        type_ = self.type_.value

        workflow_id = self.workflow_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "tenantId": tenant_id,
            "timestamp": timestamp,
            "type": type_,
            "workflowId": workflow_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        tenant_id = d.pop("tenantId")

        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType0Type(d.pop("type"))




        workflow_id = d.pop("workflowId")

        execution_event_type_0 = cls(
            execution_id=execution_id,
            tenant_id=tenant_id,
            timestamp=timestamp,
            type_=type_,
            workflow_id=workflow_id,
        )


        execution_event_type_0.additional_properties = d
        return execution_event_type_0

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
