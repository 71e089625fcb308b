from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ReplayExecution")



@_attrs_define
class ReplayExecution:
    """ `POST /api/v1/executions/{id}/replay`.

        Attributes:
            until (int | None | Unset): Replay up to this step of the execution's log (the log's step numbers, as the SSE
                events give them) and compare there; absent: to its end.
            workflow_id (None | str | Unset): Replay against this workflow of the tenant instead of the execution's own.
     """

    until: int | None | Unset = UNSET
    workflow_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        until: int | None | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        else:
            until = self.until

        workflow_id: None | str | Unset
        if isinstance(self.workflow_id, Unset):
            workflow_id = UNSET
        else:
            workflow_id = self.workflow_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
        })
        if until is not UNSET:
            field_dict["until"] = until
        if workflow_id is not UNSET:
            field_dict["workflowId"] = workflow_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_until(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        until = _parse_until(d.pop("until", UNSET))


        def _parse_workflow_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow_id = _parse_workflow_id(d.pop("workflowId", UNSET))


        replay_execution = cls(
            until=until,
            workflow_id=workflow_id,
        )


        replay_execution.additional_properties = d
        return replay_execution

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
