from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.resume_execution_arguments_type_0 import ResumeExecutionArgumentsType0
  from ..models.resume_execution_context_edits_type_0 import ResumeExecutionContextEditsType0





T = TypeVar("T", bound="ResumeExecution")



@_attrs_define
class ResumeExecution:
    """ `POST /api/v1/executions/{executionId}/resume`: a review decision, or a plain resume with
    optional context edits. Unknown fields are refused.

        Attributes:
            arguments (None | ResumeExecutionArgumentsType0 | Unset): The edited arguments of a gated tool call being
                approved (a JSON object replacing the
                model's; docs/mcp.md, *Tool approval*). Only with `approve` of a tool-call review.
            context_edits (None | ResumeExecutionContextEditsType0 | Unset): Context entries: merged before a plain resume,
                or given with an approve / backtrack.
            correlation_id (None | str | Unset): The review being answered (required with a decision).
            decision (None | str | Unset): `approve`, `reject` or `backtrack`.
            reason (None | str | Unset): Feedback of a rejection or a backtrack.
            target_step (None | str | Unset): The node a backtrack goes back to (required for `backtrack`).
     """

    arguments: None | ResumeExecutionArgumentsType0 | Unset = UNSET
    context_edits: None | ResumeExecutionContextEditsType0 | Unset = UNSET
    correlation_id: None | str | Unset = UNSET
    decision: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    target_step: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.resume_execution_arguments_type_0 import ResumeExecutionArgumentsType0 # noqa: PLC0415
        from ..models.resume_execution_context_edits_type_0 import ResumeExecutionContextEditsType0 # noqa: PLC0415
        arguments: dict[str, Any] | None | Unset
        if isinstance(self.arguments, Unset):
            arguments = UNSET
        elif isinstance(self.arguments, ResumeExecutionArgumentsType0):
            arguments = self.arguments.to_dict()
        else:
            arguments = self.arguments

        context_edits: dict[str, Any] | None | Unset
        if isinstance(self.context_edits, Unset):
            context_edits = UNSET
        elif isinstance(self.context_edits, ResumeExecutionContextEditsType0):
            context_edits = self.context_edits.to_dict()
        else:
            context_edits = self.context_edits

        correlation_id: None | str | Unset
        if isinstance(self.correlation_id, Unset):
            correlation_id = UNSET
        else:
            correlation_id = self.correlation_id

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        else:
            decision = self.decision

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        target_step: None | str | Unset
        if isinstance(self.target_step, Unset):
            target_step = UNSET
        else:
            target_step = self.target_step


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if context_edits is not UNSET:
            field_dict["contextEdits"] = context_edits
        if correlation_id is not UNSET:
            field_dict["correlationId"] = correlation_id
        if decision is not UNSET:
            field_dict["decision"] = decision
        if reason is not UNSET:
            field_dict["reason"] = reason
        if target_step is not UNSET:
            field_dict["targetStep"] = target_step

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resume_execution_arguments_type_0 import ResumeExecutionArgumentsType0 # noqa: PLC0415
        from ..models.resume_execution_context_edits_type_0 import ResumeExecutionContextEditsType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_arguments(data: object) -> None | ResumeExecutionArgumentsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                arguments_type_0 = ResumeExecutionArgumentsType0.from_dict(data)



                return arguments_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResumeExecutionArgumentsType0 | Unset, data)

        arguments = _parse_arguments(d.pop("arguments", UNSET))


        def _parse_context_edits(data: object) -> None | ResumeExecutionContextEditsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_edits_type_0 = ResumeExecutionContextEditsType0.from_dict(data)



                return context_edits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResumeExecutionContextEditsType0 | Unset, data)

        context_edits = _parse_context_edits(d.pop("contextEdits", UNSET))


        def _parse_correlation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        correlation_id = _parse_correlation_id(d.pop("correlationId", UNSET))


        def _parse_decision(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))


        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))


        def _parse_target_step(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        target_step = _parse_target_step(d.pop("targetStep", UNSET))


        resume_execution = cls(
            arguments=arguments,
            context_edits=context_edits,
            correlation_id=correlation_id,
            decision=decision,
            reason=reason,
            target_step=target_step,
        )

        return resume_execution

