from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.review_kind import ReviewKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.pending_review_arguments_type_0 import PendingReviewArgumentsType0





T = TypeVar("T", bound="PendingReview")



@_attrs_define
class PendingReview:
    """ One review a paused execution waits for.

        Attributes:
            correlation_id (str): The resume's `correlationId` for this review.
            kind (ReviewKind): What waits for a reviewer.
            node_id (str): The node under review.
            requested_at (str): RFC 3339, UTC.
            arguments (None | PendingReviewArgumentsType0 | Unset): The arguments the model gave the gated tool (kind
                `tool`), redacted as the run's state.
            branch (None | str | Unset): The fork target whose branch waits (innermost).
            deadline_at (None | str | Unset): When the review is rejected undecided (RFC 3339, UTC).
            output (None | str | Unset): The node's output as text (what the reviewer decides on), redacted as the run's
                state.
            tool (None | str | Unset): The gated tool (kind `tool`).
            within (list[str] | Unset): The fork and sub-workflow nodes the review is nested in, outermost first.
     """

    correlation_id: str
    kind: ReviewKind
    node_id: str
    requested_at: str
    arguments: None | PendingReviewArgumentsType0 | Unset = UNSET
    branch: None | str | Unset = UNSET
    deadline_at: None | str | Unset = UNSET
    output: None | str | Unset = UNSET
    tool: None | str | Unset = UNSET
    within: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.pending_review_arguments_type_0 import PendingReviewArgumentsType0 # noqa: PLC0415
        correlation_id = self.correlation_id

        kind = self.kind.value

        node_id = self.node_id

        requested_at = self.requested_at

        arguments: dict[str, Any] | None | Unset
        if isinstance(self.arguments, Unset):
            arguments = UNSET
        elif isinstance(self.arguments, PendingReviewArgumentsType0):
            arguments = self.arguments.to_dict()
        else:
            arguments = self.arguments

        branch: None | str | Unset
        if isinstance(self.branch, Unset):
            branch = UNSET
        else:
            branch = self.branch

        deadline_at: None | str | Unset
        if isinstance(self.deadline_at, Unset):
            deadline_at = UNSET
        else:
            deadline_at = self.deadline_at

        output: None | str | Unset
        if isinstance(self.output, Unset):
            output = UNSET
        else:
            output = self.output

        tool: None | str | Unset
        if isinstance(self.tool, Unset):
            tool = UNSET
        else:
            tool = self.tool

        within: list[str] | Unset = UNSET
        if not isinstance(self.within, Unset):
            within = self.within




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "correlationId": correlation_id,
            "kind": kind,
            "nodeId": node_id,
            "requestedAt": requested_at,
        })
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if branch is not UNSET:
            field_dict["branch"] = branch
        if deadline_at is not UNSET:
            field_dict["deadlineAt"] = deadline_at
        if output is not UNSET:
            field_dict["output"] = output
        if tool is not UNSET:
            field_dict["tool"] = tool
        if within is not UNSET:
            field_dict["within"] = within

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pending_review_arguments_type_0 import PendingReviewArgumentsType0 # noqa: PLC0415
        d = dict(src_dict)
        correlation_id = d.pop("correlationId")

        kind = ReviewKind(d.pop("kind"))




        node_id = d.pop("nodeId")

        requested_at = d.pop("requestedAt")

        def _parse_arguments(data: object) -> None | PendingReviewArgumentsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                arguments_type_0 = PendingReviewArgumentsType0.from_dict(data)



                return arguments_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PendingReviewArgumentsType0 | Unset, data)

        arguments = _parse_arguments(d.pop("arguments", UNSET))


        def _parse_branch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        branch = _parse_branch(d.pop("branch", UNSET))


        def _parse_deadline_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deadline_at = _parse_deadline_at(d.pop("deadlineAt", UNSET))


        def _parse_output(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        output = _parse_output(d.pop("output", UNSET))


        def _parse_tool(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tool = _parse_tool(d.pop("tool", UNSET))


        within = cast(list[str], d.pop("within", UNSET))


        pending_review = cls(
            correlation_id=correlation_id,
            kind=kind,
            node_id=node_id,
            requested_at=requested_at,
            arguments=arguments,
            branch=branch,
            deadline_at=deadline_at,
            output=output,
            tool=tool,
            within=within,
        )


        pending_review.additional_properties = d
        return pending_review

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
