from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_state import ExecutionState
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.execution_result_output import ExecutionResultOutput





T = TypeVar("T", bound="ExecutionResult")



@_attrs_define
class ExecutionResult:
    """ The result of an execution: its status and public context.

        Attributes:
            execution_id (str):
            output (ExecutionResultOutput): The context, engine keys (starting with `_`) removed.
            status (ExecutionState): The status of an execution.
            workflow_id (str):
            error (None | str | Unset): Why a failed execution failed (the error `hensuc run` prints; a hensu addition).
     """

    execution_id: str
    output: ExecutionResultOutput
    status: ExecutionState
    workflow_id: str
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.execution_result_output import ExecutionResultOutput # noqa: PLC0415
        execution_id = self.execution_id

        output = self.output.to_dict()

        status = self.status.value

        workflow_id = self.workflow_id

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "output": output,
            "status": status,
            "workflowId": workflow_id,
        })
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.execution_result_output import ExecutionResultOutput # noqa: PLC0415
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        output = ExecutionResultOutput.from_dict(d.pop("output"))




        status = ExecutionState(d.pop("status"))




        workflow_id = d.pop("workflowId")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        execution_result = cls(
            execution_id=execution_id,
            output=output,
            status=status,
            workflow_id=workflow_id,
            error=error,
        )


        execution_result.additional_properties = d
        return execution_result

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
