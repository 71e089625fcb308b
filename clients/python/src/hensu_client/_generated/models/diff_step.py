from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.difference import Difference
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.diff_step_side import DiffStepSide





T = TypeVar("T", bound="DiffStep")



@_attrs_define
class DiffStep:
    """ The steps of both runs at one position (1-based); `None`: the run has no step there.

        Attributes:
            step (int):
            a (DiffStepSide | None | Unset):
            b (DiffStepSide | None | Unset):
            differs_in (Difference | None | Unset):
     """

    step: int
    a: DiffStepSide | None | Unset = UNSET
    b: DiffStepSide | None | Unset = UNSET
    differs_in: Difference | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.diff_step_side import DiffStepSide # noqa: PLC0415
        step = self.step

        a: dict[str, Any] | None | Unset
        if isinstance(self.a, Unset):
            a = UNSET
        elif isinstance(self.a, DiffStepSide):
            a = self.a.to_dict()
        else:
            a = self.a

        b: dict[str, Any] | None | Unset
        if isinstance(self.b, Unset):
            b = UNSET
        elif isinstance(self.b, DiffStepSide):
            b = self.b.to_dict()
        else:
            b = self.b

        differs_in: None | str | Unset
        if isinstance(self.differs_in, Unset):
            differs_in = UNSET
        elif isinstance(self.differs_in, Difference):
            differs_in = self.differs_in.value
        else:
            differs_in = self.differs_in


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "step": step,
        })
        if a is not UNSET:
            field_dict["a"] = a
        if b is not UNSET:
            field_dict["b"] = b
        if differs_in is not UNSET:
            field_dict["differs_in"] = differs_in

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.diff_step_side import DiffStepSide # noqa: PLC0415
        d = dict(src_dict)
        step = d.pop("step")

        def _parse_a(data: object) -> DiffStepSide | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                a_type_1 = DiffStepSide.from_dict(data)



                return a_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DiffStepSide | None | Unset, data)

        a = _parse_a(d.pop("a", UNSET))


        def _parse_b(data: object) -> DiffStepSide | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                b_type_1 = DiffStepSide.from_dict(data)



                return b_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DiffStepSide | None | Unset, data)

        b = _parse_b(d.pop("b", UNSET))


        def _parse_differs_in(data: object) -> Difference | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                differs_in_type_1 = Difference(data)



                return differs_in_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Difference | None | Unset, data)

        differs_in = _parse_differs_in(d.pop("differs_in", UNSET))


        diff_step = cls(
            step=step,
            a=a,
            b=b,
            differs_in=differs_in,
        )


        diff_step.additional_properties = d
        return diff_step

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
