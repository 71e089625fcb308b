from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.replay_divergence import ReplayDivergence





T = TypeVar("T", bound="ExecutionReplayed")



@_attrs_define
class ExecutionReplayed:
    """ A replay's result.

        Attributes:
            execution_id (str):
            from_step (int): The log step the replay started from and the one it was compared with.
            identical (bool): Path, transitions, outputs, final context and end agree.
            not_recorded (list[str]): The calls the recording had no answer for (answered with a failure, never live).
            recorded_answers (int): Agent answers the recording held.
            recorded_status (str):
            replayed_status (str):
            steps (int): Steps compared.
            to_step (int):
            workflow_id (str): The workflow replayed: the execution's, or the one asked for.
            divergence (None | ReplayDivergence | Unset):
     """

    execution_id: str
    from_step: int
    identical: bool
    not_recorded: list[str]
    recorded_answers: int
    recorded_status: str
    replayed_status: str
    steps: int
    to_step: int
    workflow_id: str
    divergence: None | ReplayDivergence | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.replay_divergence import ReplayDivergence # noqa: PLC0415
        execution_id = self.execution_id

        from_step = self.from_step

        identical = self.identical

        not_recorded = self.not_recorded



        recorded_answers = self.recorded_answers

        recorded_status = self.recorded_status

        replayed_status = self.replayed_status

        steps = self.steps

        to_step = self.to_step

        workflow_id = self.workflow_id

        divergence: dict[str, Any] | None | Unset
        if isinstance(self.divergence, Unset):
            divergence = UNSET
        elif isinstance(self.divergence, ReplayDivergence):
            divergence = self.divergence.to_dict()
        else:
            divergence = self.divergence


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "fromStep": from_step,
            "identical": identical,
            "notRecorded": not_recorded,
            "recordedAnswers": recorded_answers,
            "recordedStatus": recorded_status,
            "replayedStatus": replayed_status,
            "steps": steps,
            "toStep": to_step,
            "workflowId": workflow_id,
        })
        if divergence is not UNSET:
            field_dict["divergence"] = divergence

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replay_divergence import ReplayDivergence # noqa: PLC0415
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        from_step = d.pop("fromStep")

        identical = d.pop("identical")

        not_recorded = cast(list[str], d.pop("notRecorded"))


        recorded_answers = d.pop("recordedAnswers")

        recorded_status = d.pop("recordedStatus")

        replayed_status = d.pop("replayedStatus")

        steps = d.pop("steps")

        to_step = d.pop("toStep")

        workflow_id = d.pop("workflowId")

        def _parse_divergence(data: object) -> None | ReplayDivergence | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                divergence_type_1 = ReplayDivergence.from_dict(data)



                return divergence_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReplayDivergence | Unset, data)

        divergence = _parse_divergence(d.pop("divergence", UNSET))


        execution_replayed = cls(
            execution_id=execution_id,
            from_step=from_step,
            identical=identical,
            not_recorded=not_recorded,
            recorded_answers=recorded_answers,
            recorded_status=recorded_status,
            replayed_status=replayed_status,
            steps=steps,
            to_step=to_step,
            workflow_id=workflow_id,
            divergence=divergence,
        )


        execution_replayed.additional_properties = d
        return execution_replayed

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
