from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_state import ExecutionState
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ExecutionStatus")



@_attrs_define
class ExecutionStatus:
    """ The status of one execution.

        Attributes:
            execution_id (str):
            started_at (str): RFC 3339, UTC.
            status (ExecutionState): The status of an execution.
            step (int): The write sequence number (+1 on every checkpoint or status change).
            updated_at (str):
            workflow_id (str):
            cancel_requested (bool | Unset): A cancellation was requested; the running owner stops at its next node
                boundary.
            correlation_id (None | str | Unset): The review a paused execution waits for (the resume's `correlationId`).
            current_node_id (None | str | Unset): The node executed next (or the end node reached).
            error (None | str | Unset): Why a failed execution failed, as on its result (only on the status of one
                execution;
                a hensu addition).
            exit_status (None | str | Unset): The end node's exit status (`SUCCESS` / `FAILURE`).
            waiting_for (None | str | Unset): A paused execution waiting at a `wait` or `awaitSignal` node: the signal it
                waits for
                (the first, when its fork branches or sub-workflow children wait for several;
                docs/language.md, *Timers and signals*; a hensu addition).
            wake_at (None | str | Unset): When such an execution continues without its signal (RFC 3339, UTC): the earliest
                wake
                time of its waits and review deadlines.
     """

    execution_id: str
    started_at: str
    status: ExecutionState
    step: int
    updated_at: str
    workflow_id: str
    cancel_requested: bool | Unset = UNSET
    correlation_id: None | str | Unset = UNSET
    current_node_id: None | str | Unset = UNSET
    error: None | str | Unset = UNSET
    exit_status: None | str | Unset = UNSET
    waiting_for: None | str | Unset = UNSET
    wake_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        execution_id = self.execution_id

        started_at = self.started_at

        status = self.status.value

        step = self.step

        updated_at = self.updated_at

        workflow_id = self.workflow_id

        cancel_requested = self.cancel_requested

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

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        exit_status: None | str | Unset
        if isinstance(self.exit_status, Unset):
            exit_status = UNSET
        else:
            exit_status = self.exit_status

        waiting_for: None | str | Unset
        if isinstance(self.waiting_for, Unset):
            waiting_for = UNSET
        else:
            waiting_for = self.waiting_for

        wake_at: None | str | Unset
        if isinstance(self.wake_at, Unset):
            wake_at = UNSET
        else:
            wake_at = self.wake_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "startedAt": started_at,
            "status": status,
            "step": step,
            "updatedAt": updated_at,
            "workflowId": workflow_id,
        })
        if cancel_requested is not UNSET:
            field_dict["cancelRequested"] = cancel_requested
        if correlation_id is not UNSET:
            field_dict["correlationId"] = correlation_id
        if current_node_id is not UNSET:
            field_dict["currentNodeId"] = current_node_id
        if error is not UNSET:
            field_dict["error"] = error
        if exit_status is not UNSET:
            field_dict["exitStatus"] = exit_status
        if waiting_for is not UNSET:
            field_dict["waitingFor"] = waiting_for
        if wake_at is not UNSET:
            field_dict["wakeAt"] = wake_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        started_at = d.pop("startedAt")

        status = ExecutionState(d.pop("status"))




        step = d.pop("step")

        updated_at = d.pop("updatedAt")

        workflow_id = d.pop("workflowId")

        cancel_requested = d.pop("cancelRequested", UNSET)

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


        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))


        def _parse_exit_status(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        exit_status = _parse_exit_status(d.pop("exitStatus", UNSET))


        def _parse_waiting_for(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        waiting_for = _parse_waiting_for(d.pop("waitingFor", UNSET))


        def _parse_wake_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        wake_at = _parse_wake_at(d.pop("wakeAt", UNSET))


        execution_status = cls(
            execution_id=execution_id,
            started_at=started_at,
            status=status,
            step=step,
            updated_at=updated_at,
            workflow_id=workflow_id,
            cancel_requested=cancel_requested,
            correlation_id=correlation_id,
            current_node_id=current_node_id,
            error=error,
            exit_status=exit_status,
            waiting_for=waiting_for,
            wake_at=wake_at,
        )


        execution_status.additional_properties = d
        return execution_status

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
