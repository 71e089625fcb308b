from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="DiffRun")



@_attrs_define
class DiffRun:
    """ One run's summary in a diff.

        Attributes:
            path (list[str]): The nodes the run executed, in order (end node excluded).
            run_id (str):
            status (str): The stored status (`completed`, `failed`, …).
            workflow (str):
            workflow_version (str):
            exit_status (None | str | Unset):
     """

    path: list[str]
    run_id: str
    status: str
    workflow: str
    workflow_version: str
    exit_status: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        path = self.path



        run_id = self.run_id

        status = self.status

        workflow = self.workflow

        workflow_version = self.workflow_version

        exit_status: None | str | Unset
        if isinstance(self.exit_status, Unset):
            exit_status = UNSET
        else:
            exit_status = self.exit_status


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "path": path,
            "run_id": run_id,
            "status": status,
            "workflow": workflow,
            "workflow_version": workflow_version,
        })
        if exit_status is not UNSET:
            field_dict["exit_status"] = exit_status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        path = cast(list[str], d.pop("path"))


        run_id = d.pop("run_id")

        status = d.pop("status")

        workflow = d.pop("workflow")

        workflow_version = d.pop("workflow_version")

        def _parse_exit_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        exit_status = _parse_exit_status(d.pop("exit_status", UNSET))


        diff_run = cls(
            path=path,
            run_id=run_id,
            status=status,
            workflow=workflow,
            workflow_version=workflow_version,
            exit_status=exit_status,
        )


        diff_run.additional_properties = d
        return diff_run

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
