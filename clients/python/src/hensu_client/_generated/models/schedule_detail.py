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
  from ..models.schedule_context import ScheduleContext
  from ..models.schedule_firing import ScheduleFiring
  from ..models.schedule_warnings_type_0 import ScheduleWarningsType0





T = TypeVar("T", bound="ScheduleDetail")



@_attrs_define
class ScheduleDetail:
    """ A schedule with its latest firings (newest first).

        Attributes:
            context (ScheduleContext):
            created_at (str):
            cron (str):
            grace_seconds (int):
            id (str):
            missed (Missed): What happens to the ticks that passed while no server ran the schedule.
            overlap (Overlap): What a firing does while the schedule's previous run has not ended.
            paused (bool):
            source (str): `api`, or `config` for a `[[schedules]]` entry of the server's hensu.toml.
            time_zone (str):
            updated_at (str):
            workflow_id (str):
            firings (list[ScheduleFiring]):
            next_fire_at (None | str | Unset): When it fires next (RFC 3339, UTC); absent when paused or when the cron has
                no further
                occurrence.
            warnings (None | ScheduleWarningsType0 | Unset): Warnings of the budget check (W0602: the cost could not be
                priced), as the diagnostics
                report of `hensuc check --format json`; absent when there are none.
     """

    context: ScheduleContext
    created_at: str
    cron: str
    grace_seconds: int
    id: str
    missed: Missed
    overlap: Overlap
    paused: bool
    source: str
    time_zone: str
    updated_at: str
    workflow_id: str
    firings: list[ScheduleFiring]
    next_fire_at: None | str | Unset = UNSET
    warnings: None | ScheduleWarningsType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule_context import ScheduleContext # noqa: PLC0415
        from ..models.schedule_firing import ScheduleFiring # noqa: PLC0415
        from ..models.schedule_warnings_type_0 import ScheduleWarningsType0 # noqa: PLC0415
        context = self.context.to_dict()

        created_at = self.created_at

        cron = self.cron

        grace_seconds = self.grace_seconds

        id = self.id

        missed = self.missed.value

        overlap = self.overlap.value

        paused = self.paused

        source = self.source

        time_zone = self.time_zone

        updated_at = self.updated_at

        workflow_id = self.workflow_id

        firings = []
        for firings_item_data in self.firings:
            firings_item = firings_item_data.to_dict()
            firings.append(firings_item)



        next_fire_at: None | str | Unset
        if isinstance(self.next_fire_at, Unset):
            next_fire_at = UNSET
        else:
            next_fire_at = self.next_fire_at

        warnings: dict[str, Any] | None | Unset
        if isinstance(self.warnings, Unset):
            warnings = UNSET
        elif isinstance(self.warnings, ScheduleWarningsType0):
            warnings = self.warnings.to_dict()
        else:
            warnings = self.warnings


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "context": context,
            "createdAt": created_at,
            "cron": cron,
            "graceSeconds": grace_seconds,
            "id": id,
            "missed": missed,
            "overlap": overlap,
            "paused": paused,
            "source": source,
            "timeZone": time_zone,
            "updatedAt": updated_at,
            "workflowId": workflow_id,
            "firings": firings,
        })
        if next_fire_at is not UNSET:
            field_dict["nextFireAt"] = next_fire_at
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schedule_context import ScheduleContext # noqa: PLC0415
        from ..models.schedule_firing import ScheduleFiring # noqa: PLC0415
        from ..models.schedule_warnings_type_0 import ScheduleWarningsType0 # noqa: PLC0415
        d = dict(src_dict)
        context = ScheduleContext.from_dict(d.pop("context"))




        created_at = d.pop("createdAt")

        cron = d.pop("cron")

        grace_seconds = d.pop("graceSeconds")

        id = d.pop("id")

        missed = Missed(d.pop("missed"))




        overlap = Overlap(d.pop("overlap"))




        paused = d.pop("paused")

        source = d.pop("source")

        time_zone = d.pop("timeZone")

        updated_at = d.pop("updatedAt")

        workflow_id = d.pop("workflowId")

        firings = []
        _firings = d.pop("firings")
        for firings_item_data in (_firings):
            firings_item = ScheduleFiring.from_dict(firings_item_data)



            firings.append(firings_item)


        def _parse_next_fire_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_fire_at = _parse_next_fire_at(d.pop("nextFireAt", UNSET))


        def _parse_warnings(data: object) -> None | ScheduleWarningsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                warnings_type_0 = ScheduleWarningsType0.from_dict(data)



                return warnings_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleWarningsType0 | Unset, data)

        warnings = _parse_warnings(d.pop("warnings", UNSET))


        schedule_detail = cls(
            context=context,
            created_at=created_at,
            cron=cron,
            grace_seconds=grace_seconds,
            id=id,
            missed=missed,
            overlap=overlap,
            paused=paused,
            source=source,
            time_zone=time_zone,
            updated_at=updated_at,
            workflow_id=workflow_id,
            firings=firings,
            next_fire_at=next_fire_at,
            warnings=warnings,
        )


        schedule_detail.additional_properties = d
        return schedule_detail

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
