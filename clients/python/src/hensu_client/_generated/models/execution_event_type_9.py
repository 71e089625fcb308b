from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_9_type import ExecutionEventType9Type
from ..models.review_kind import ReviewKind
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ExecutionEventType9")



@_attrs_define
class ExecutionEventType9:
    """ A review the paused execution waits for (docs/server.md, *Pending reviews*): before
    the `execution.paused` of the pause the execution is in, one per waiting review (the
    main flow's, each fork branch's, each child's), under the pause's id. A review still
    waiting after another was decided is announced again with the same `correlationId`.

        Attributes:
            correlation_id (str): The resume's `correlationId` for this review.
            execution_id (str):
            kind (ReviewKind): What waits for a reviewer.
            timestamp (str): When the review was requested.
            type_ (ExecutionEventType9Type):
            workflow_id (str):
            branch (None | str | Unset): The fork target whose branch waits (innermost).
            deadline_at (None | str | Unset): When it is rejected undecided (RFC 3339, UTC).
            node_id (None | str | Unset):
            within (list[str] | Unset): The fork and sub-workflow nodes it is nested in, outermost first.
     """

    correlation_id: str
    execution_id: str
    kind: ReviewKind
    timestamp: str
    type_: ExecutionEventType9Type
    workflow_id: str
    branch: None | str | Unset = UNSET
    deadline_at: None | str | Unset = UNSET
    node_id: None | str | Unset = UNSET
    within: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        correlation_id = self.correlation_id

        execution_id = self.execution_id

        kind = self.kind.value

        timestamp = self.timestamp

        type_ = self.type_.value

        workflow_id = self.workflow_id

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

        node_id: None | str | Unset
        if isinstance(self.node_id, Unset):
            node_id = UNSET
        else:
            node_id = self.node_id

        within: list[str] | Unset = UNSET
        if not isinstance(self.within, Unset):
            within = self.within




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "correlationId": correlation_id,
            "executionId": execution_id,
            "kind": kind,
            "timestamp": timestamp,
            "type": type_,
            "workflowId": workflow_id,
        })
        if branch is not UNSET:
            field_dict["branch"] = branch
        if deadline_at is not UNSET:
            field_dict["deadlineAt"] = deadline_at
        if node_id is not UNSET:
            field_dict["nodeId"] = node_id
        if within is not UNSET:
            field_dict["within"] = within

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        correlation_id = d.pop("correlationId")

        execution_id = d.pop("executionId")

        kind = ReviewKind(d.pop("kind"))




        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType9Type(d.pop("type"))




        workflow_id = d.pop("workflowId")

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


        def _parse_node_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node_id = _parse_node_id(d.pop("nodeId", UNSET))


        within = cast(list[str], d.pop("within", UNSET))


        execution_event_type_9 = cls(
            correlation_id=correlation_id,
            execution_id=execution_id,
            kind=kind,
            timestamp=timestamp,
            type_=type_,
            workflow_id=workflow_id,
            branch=branch,
            deadline_at=deadline_at,
            node_id=node_id,
            within=within,
        )


        execution_event_type_9.additional_properties = d
        return execution_event_type_9

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
