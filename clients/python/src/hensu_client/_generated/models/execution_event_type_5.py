from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.execution_event_type_5_type import ExecutionEventType5Type
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ExecutionEventType5")



@_attrs_define
class ExecutionEventType5:
    """ A call of the node in flight was journaled (docs/security.md, *Call journal*): a tool
    of the tool loop, a command, a webhook or api-caller request, a model response. Never
    its arguments or result.

        Attributes:
            call_index (int): The call's number in its node visit.
            execution_id (str):
            kind (str): `model`, `tool`, `command`, `webhook`, `api_call`, `action` or `approval` (the
                decision on a gated tool call).
            name (str): The tool, command, handler or model.
            phase (str): `started`, `finished`, or `held` (an interrupted unsafe call paused the run, or a
                gated tool call waits for approval).
            timestamp (str):
            type_ (ExecutionEventType5Type):
            workflow_id (str):
            duration_ms (int | None | Unset):
            node_id (None | str | Unset):
            ok (bool | None | Unset):
     """

    call_index: int
    execution_id: str
    kind: str
    name: str
    phase: str
    timestamp: str
    type_: ExecutionEventType5Type
    workflow_id: str
    duration_ms: int | None | Unset = UNSET
    node_id: None | str | Unset = UNSET
    ok: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        call_index = self.call_index

        execution_id = self.execution_id

        kind = self.kind

        name = self.name

        phase = self.phase

        timestamp = self.timestamp

        type_ = self.type_.value

        workflow_id = self.workflow_id

        duration_ms: int | None | Unset
        if isinstance(self.duration_ms, Unset):
            duration_ms = UNSET
        else:
            duration_ms = self.duration_ms

        node_id: None | str | Unset
        if isinstance(self.node_id, Unset):
            node_id = UNSET
        else:
            node_id = self.node_id

        ok: bool | None | Unset
        if isinstance(self.ok, Unset):
            ok = UNSET
        else:
            ok = self.ok


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "callIndex": call_index,
            "executionId": execution_id,
            "kind": kind,
            "name": name,
            "phase": phase,
            "timestamp": timestamp,
            "type": type_,
            "workflowId": workflow_id,
        })
        if duration_ms is not UNSET:
            field_dict["durationMs"] = duration_ms
        if node_id is not UNSET:
            field_dict["nodeId"] = node_id
        if ok is not UNSET:
            field_dict["ok"] = ok

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        call_index = d.pop("callIndex")

        execution_id = d.pop("executionId")

        kind = d.pop("kind")

        name = d.pop("name")

        phase = d.pop("phase")

        timestamp = d.pop("timestamp")

        type_ = ExecutionEventType5Type(d.pop("type"))




        workflow_id = d.pop("workflowId")

        def _parse_duration_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        duration_ms = _parse_duration_ms(d.pop("durationMs", UNSET))


        def _parse_node_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node_id = _parse_node_id(d.pop("nodeId", UNSET))


        def _parse_ok(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        ok = _parse_ok(d.pop("ok", UNSET))


        execution_event_type_5 = cls(
            call_index=call_index,
            execution_id=execution_id,
            kind=kind,
            name=name,
            phase=phase,
            timestamp=timestamp,
            type_=type_,
            workflow_id=workflow_id,
            duration_ms=duration_ms,
            node_id=node_id,
            ok=ok,
        )


        execution_event_type_5.additional_properties = d
        return execution_event_type_5

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
