from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.execution_started import ExecutionStarted





T = TypeVar("T", bound="BatchStarted")



@_attrs_define
class BatchStarted:
    """ The queued executions, in the order of the contexts.

        Attributes:
            executions (list[ExecutionStarted]):
     """

    executions: list[ExecutionStarted]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.execution_started import ExecutionStarted # noqa: PLC0415
        executions = []
        for executions_item_data in self.executions:
            executions_item = executions_item_data.to_dict()
            executions.append(executions_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executions": executions,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.execution_started import ExecutionStarted # noqa: PLC0415
        d = dict(src_dict)
        executions = []
        _executions = d.pop("executions")
        for executions_item_data in (_executions):
            executions_item = ExecutionStarted.from_dict(executions_item_data)



            executions.append(executions_item)


        batch_started = cls(
            executions=executions,
        )


        batch_started.additional_properties = d
        return batch_started

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
