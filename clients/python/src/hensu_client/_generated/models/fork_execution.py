from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.fork_execution_context_edits_type_0 import ForkExecutionContextEditsType0





T = TypeVar("T", bound="ForkExecution")



@_attrs_define
class ForkExecution:
    """ `POST /api/v1/executions/{id}/fork`.

        Attributes:
            step (int): The step of the parent's log to continue from (the log's step numbers, as the SSE
                events and `hensuc runs show` give them): its state is the fork's, and the node it
                names as next runs first.
            context_edits (ForkExecutionContextEditsType0 | None | Unset): Merged into the context at the fork point.
            workflow_id (None | str | Unset): Continue with this workflow of the tenant instead of the execution's own; the
                state
                at `step` is checked against it first (422 `fork_refused` with diagnostics E0908,
                E0909; nothing is written).
     """

    step: int
    context_edits: ForkExecutionContextEditsType0 | None | Unset = UNSET
    workflow_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.fork_execution_context_edits_type_0 import ForkExecutionContextEditsType0 # noqa: PLC0415
        step = self.step

        context_edits: dict[str, Any] | None | Unset
        if isinstance(self.context_edits, Unset):
            context_edits = UNSET
        elif isinstance(self.context_edits, ForkExecutionContextEditsType0):
            context_edits = self.context_edits.to_dict()
        else:
            context_edits = self.context_edits

        workflow_id: None | str | Unset
        if isinstance(self.workflow_id, Unset):
            workflow_id = UNSET
        else:
            workflow_id = self.workflow_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "step": step,
        })
        if context_edits is not UNSET:
            field_dict["contextEdits"] = context_edits
        if workflow_id is not UNSET:
            field_dict["workflowId"] = workflow_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fork_execution_context_edits_type_0 import ForkExecutionContextEditsType0 # noqa: PLC0415
        d = dict(src_dict)
        step = d.pop("step")

        def _parse_context_edits(data: object) -> ForkExecutionContextEditsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_edits_type_0 = ForkExecutionContextEditsType0.from_dict(data)



                return context_edits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ForkExecutionContextEditsType0 | None | Unset, data)

        context_edits = _parse_context_edits(d.pop("contextEdits", UNSET))


        def _parse_workflow_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow_id = _parse_workflow_id(d.pop("workflowId", UNSET))


        fork_execution = cls(
            step=step,
            context_edits=context_edits,
            workflow_id=workflow_id,
        )


        fork_execution.additional_properties = d
        return fork_execution

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
