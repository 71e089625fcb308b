from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.difference import Difference
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="FirstDifference")



@_attrs_define
class FirstDifference:
    """ Where the runs part first.

        Attributes:
            step (int):
            differs_in (Difference | None | Unset):
            node_a (None | str | Unset):
            node_b (None | str | Unset):
     """

    step: int
    differs_in: Difference | None | Unset = UNSET
    node_a: None | str | Unset = UNSET
    node_b: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        step = self.step

        differs_in: None | str | Unset
        if isinstance(self.differs_in, Unset):
            differs_in = UNSET
        elif isinstance(self.differs_in, Difference):
            differs_in = self.differs_in.value
        else:
            differs_in = self.differs_in

        node_a: None | str | Unset
        if isinstance(self.node_a, Unset):
            node_a = UNSET
        else:
            node_a = self.node_a

        node_b: None | str | Unset
        if isinstance(self.node_b, Unset):
            node_b = UNSET
        else:
            node_b = self.node_b


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "step": step,
        })
        if differs_in is not UNSET:
            field_dict["differs_in"] = differs_in
        if node_a is not UNSET:
            field_dict["node_a"] = node_a
        if node_b is not UNSET:
            field_dict["node_b"] = node_b

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        step = d.pop("step")

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


        def _parse_node_a(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node_a = _parse_node_a(d.pop("node_a", UNSET))


        def _parse_node_b(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        node_b = _parse_node_b(d.pop("node_b", UNSET))


        first_difference = cls(
            step=step,
            differs_in=differs_in,
            node_a=node_a,
            node_b=node_b,
        )


        first_difference.additional_properties = d
        return first_difference

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
