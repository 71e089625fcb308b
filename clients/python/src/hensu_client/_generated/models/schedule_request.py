from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.missed import Missed
from ..models.overlap import Overlap
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.schedule_request_context_type_0 import ScheduleRequestContextType0





T = TypeVar("T", bound="ScheduleRequest")



@_attrs_define
class ScheduleRequest:
    """ `POST /api/v1/schedules` (with `id`) and `PUT /api/v1/schedules/{scheduleId}` (without):
    the whole definition. Unknown fields are refused.

        Attributes:
            cron (str): Five fields (minute hour day-of-month month day-of-week) or six with seconds first.
            workflow_id (str): A workflow the tenant pushed.
            context (None | ScheduleRequestContextType0 | Unset): The initial context of each run.
            grace_seconds (int | None | Unset): Seconds a tick may be late and still count as on time (default 60).
            id (None | str | Unset): The schedule's id (create only; the id rule of workflows).
            missed (Missed | Unset): What happens to the ticks that passed while no server ran the schedule.
            overlap (Overlap | Unset): What a firing does while the schedule's previous run has not ended.
            paused (bool | Unset): Created (or kept) paused.
            time_zone (None | str | Unset): An IANA time-zone name (default `UTC`).
     """

    cron: str
    workflow_id: str
    context: None | ScheduleRequestContextType0 | Unset = UNSET
    grace_seconds: int | None | Unset = UNSET
    id: None | str | Unset = UNSET
    missed: Missed | Unset = UNSET
    overlap: Overlap | Unset = UNSET
    paused: bool | Unset = UNSET
    time_zone: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule_request_context_type_0 import ScheduleRequestContextType0 # noqa: PLC0415
        cron = self.cron

        workflow_id = self.workflow_id

        context: dict[str, Any] | None | Unset
        if isinstance(self.context, Unset):
            context = UNSET
        elif isinstance(self.context, ScheduleRequestContextType0):
            context = self.context.to_dict()
        else:
            context = self.context

        grace_seconds: int | None | Unset
        if isinstance(self.grace_seconds, Unset):
            grace_seconds = UNSET
        else:
            grace_seconds = self.grace_seconds

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        missed: str | Unset = UNSET
        if not isinstance(self.missed, Unset):
            missed = self.missed.value


        overlap: str | Unset = UNSET
        if not isinstance(self.overlap, Unset):
            overlap = self.overlap.value


        paused = self.paused

        time_zone: None | str | Unset
        if isinstance(self.time_zone, Unset):
            time_zone = UNSET
        else:
            time_zone = self.time_zone


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "cron": cron,
            "workflowId": workflow_id,
        })
        if context is not UNSET:
            field_dict["context"] = context
        if grace_seconds is not UNSET:
            field_dict["graceSeconds"] = grace_seconds
        if id is not UNSET:
            field_dict["id"] = id
        if missed is not UNSET:
            field_dict["missed"] = missed
        if overlap is not UNSET:
            field_dict["overlap"] = overlap
        if paused is not UNSET:
            field_dict["paused"] = paused
        if time_zone is not UNSET:
            field_dict["timeZone"] = time_zone

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schedule_request_context_type_0 import ScheduleRequestContextType0 # noqa: PLC0415
        d = dict(src_dict)
        cron = d.pop("cron")

        workflow_id = d.pop("workflowId")

        def _parse_context(data: object) -> None | ScheduleRequestContextType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                context_type_0 = ScheduleRequestContextType0.from_dict(data)



                return context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleRequestContextType0 | Unset, data)

        context = _parse_context(d.pop("context", UNSET))


        def _parse_grace_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        grace_seconds = _parse_grace_seconds(d.pop("graceSeconds", UNSET))


        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))


        _missed = d.pop("missed", UNSET)
        missed: Missed | Unset
        if isinstance(_missed,  Unset):
            missed = UNSET
        else:
            missed = Missed(_missed)




        _overlap = d.pop("overlap", UNSET)
        overlap: Overlap | Unset
        if isinstance(_overlap,  Unset):
            overlap = UNSET
        else:
            overlap = Overlap(_overlap)




        paused = d.pop("paused", UNSET)

        def _parse_time_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        time_zone = _parse_time_zone(d.pop("timeZone", UNSET))


        schedule_request = cls(
            cron=cron,
            workflow_id=workflow_id,
            context=context,
            grace_seconds=grace_seconds,
            id=id,
            missed=missed,
            overlap=overlap,
            paused=paused,
            time_zone=time_zone,
        )

        return schedule_request

