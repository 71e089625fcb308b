from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.context_difference import ContextDifference
  from ..models.diff_run import DiffRun
  from ..models.diff_step import DiffStep
  from ..models.first_difference import FirstDifference





T = TypeVar("T", bound="RunsDiff")



@_attrs_define
class RunsDiff:
    """ Two runs compared (docs/schemas/runs-diff.schema.json).

        Attributes:
            a (DiffRun): One run's summary in a diff.
            b (DiffRun): One run's summary in a diff.
            context (list[ContextDifference]): The public context keys whose final values differ, in key order.
            format_version (int): 1.
            same (bool): Same steps, same final public context and same status.
            steps (list[DiffStep]):
            first_difference (FirstDifference | None | Unset):
     """

    a: DiffRun
    b: DiffRun
    context: list[ContextDifference]
    format_version: int
    same: bool
    steps: list[DiffStep]
    first_difference: FirstDifference | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.context_difference import ContextDifference # noqa: PLC0415
        from ..models.diff_run import DiffRun # noqa: PLC0415
        from ..models.diff_step import DiffStep # noqa: PLC0415
        from ..models.first_difference import FirstDifference # noqa: PLC0415
        a = self.a.to_dict()

        b = self.b.to_dict()

        context = []
        for context_item_data in self.context:
            context_item = context_item_data.to_dict()
            context.append(context_item)



        format_version = self.format_version

        same = self.same

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)



        first_difference: dict[str, Any] | None | Unset
        if isinstance(self.first_difference, Unset):
            first_difference = UNSET
        elif isinstance(self.first_difference, FirstDifference):
            first_difference = self.first_difference.to_dict()
        else:
            first_difference = self.first_difference


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "a": a,
            "b": b,
            "context": context,
            "format_version": format_version,
            "same": same,
            "steps": steps,
        })
        if first_difference is not UNSET:
            field_dict["first_difference"] = first_difference

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.context_difference import ContextDifference # noqa: PLC0415
        from ..models.diff_run import DiffRun # noqa: PLC0415
        from ..models.diff_step import DiffStep # noqa: PLC0415
        from ..models.first_difference import FirstDifference # noqa: PLC0415
        d = dict(src_dict)
        a = DiffRun.from_dict(d.pop("a"))




        b = DiffRun.from_dict(d.pop("b"))




        context = []
        _context = d.pop("context")
        for context_item_data in (_context):
            context_item = ContextDifference.from_dict(context_item_data)



            context.append(context_item)


        format_version = d.pop("format_version")

        same = d.pop("same")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in (_steps):
            steps_item = DiffStep.from_dict(steps_item_data)



            steps.append(steps_item)


        def _parse_first_difference(data: object) -> FirstDifference | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                first_difference_type_1 = FirstDifference.from_dict(data)



                return first_difference_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(FirstDifference | None | Unset, data)

        first_difference = _parse_first_difference(d.pop("first_difference", UNSET))


        runs_diff = cls(
            a=a,
            b=b,
            context=context,
            format_version=format_version,
            same=same,
            steps=steps,
            first_difference=first_difference,
        )


        runs_diff.additional_properties = d
        return runs_diff

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
