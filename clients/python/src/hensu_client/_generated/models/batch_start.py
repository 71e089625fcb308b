from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.batch_start_contexts_item import BatchStartContextsItem





T = TypeVar("T", bound="BatchStart")



@_attrs_define
class BatchStart:
    """ `POST /api/v1/executions/batch`: one workflow, a context per run.

        Attributes:
            contexts (list[BatchStartContextsItem]): One initial context per run, in order: at least one, at most the
                server's
                `batch_max_starts` (1,000 by default).
            workflow_id (str): A workflow the tenant pushed.
     """

    contexts: list[BatchStartContextsItem]
    workflow_id: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.batch_start_contexts_item import BatchStartContextsItem # noqa: PLC0415
        contexts = []
        for contexts_item_data in self.contexts:
            contexts_item = contexts_item_data.to_dict()
            contexts.append(contexts_item)



        workflow_id = self.workflow_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "contexts": contexts,
            "workflowId": workflow_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_start_contexts_item import BatchStartContextsItem # noqa: PLC0415
        d = dict(src_dict)
        contexts = []
        _contexts = d.pop("contexts")
        for contexts_item_data in (_contexts):
            contexts_item = BatchStartContextsItem.from_dict(contexts_item_data)



            contexts.append(contexts_item)


        workflow_id = d.pop("workflowId")

        batch_start = cls(
            contexts=contexts,
            workflow_id=workflow_id,
        )

        return batch_start

