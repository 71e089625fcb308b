from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.pending_review import PendingReview





T = TypeVar("T", bound="PendingReviews")



@_attrs_define
class PendingReviews:
    """ `GET /api/v1/executions/{id}/reviews`.

        Attributes:
            execution_id (str):
            reviews (list[PendingReview]): In the order the execution's flows hold them (main flow first, then fork branches
                in
                target order, depth first); empty unless the execution is paused for review.
     """

    execution_id: str
    reviews: list[PendingReview]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.pending_review import PendingReview # noqa: PLC0415
        execution_id = self.execution_id

        reviews = []
        for reviews_item_data in self.reviews:
            reviews_item = reviews_item_data.to_dict()
            reviews.append(reviews_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "executionId": execution_id,
            "reviews": reviews,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.pending_review import PendingReview # noqa: PLC0415
        d = dict(src_dict)
        execution_id = d.pop("executionId")

        reviews = []
        _reviews = d.pop("reviews")
        for reviews_item_data in (_reviews):
            reviews_item = PendingReview.from_dict(reviews_item_data)



            reviews.append(reviews_item)


        pending_reviews = cls(
            execution_id=execution_id,
            reviews=reviews,
        )


        pending_reviews.additional_properties = d
        return pending_reviews

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
