from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.error_body_diagnostics_type_0 import ErrorBodyDiagnosticsType0





T = TypeVar("T", bound="ErrorBody")



@_attrs_define
class ErrorBody:
    """ The body of every error response.

        Attributes:
            error (str): What went wrong (a fixed text for server-side failures).
            status (int): The HTTP status code, repeated.
            code (None | str | Unset): Why a limit or a rule refused the request (`context_too_large`, `context_too_deep`,
                `body_too_large`, `request_timeout`, `host_not_allowed`, `too_many_streams`,
                `server_busy`; a list's `invalid_parameter`, `invalid_cursor`; a start's
                `invalid_idempotency_key`, `idempotency_key_reused`; `store_unavailable`); absent for
                other errors.
            diagnostics (ErrorBodyDiagnosticsType0 | None | Unset): A refused push: every diagnostic of the hensu checks.
     """

    error: str
    status: int
    code: None | str | Unset = UNSET
    diagnostics: ErrorBodyDiagnosticsType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.error_body_diagnostics_type_0 import ErrorBodyDiagnosticsType0 # noqa: PLC0415
        error = self.error

        status = self.status

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        diagnostics: dict[str, Any] | None | Unset
        if isinstance(self.diagnostics, Unset):
            diagnostics = UNSET
        elif isinstance(self.diagnostics, ErrorBodyDiagnosticsType0):
            diagnostics = self.diagnostics.to_dict()
        else:
            diagnostics = self.diagnostics


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "error": error,
            "status": status,
        })
        if code is not UNSET:
            field_dict["code"] = code
        if diagnostics is not UNSET:
            field_dict["diagnostics"] = diagnostics

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.error_body_diagnostics_type_0 import ErrorBodyDiagnosticsType0 # noqa: PLC0415
        d = dict(src_dict)
        error = d.pop("error")

        status = d.pop("status")

        def _parse_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        code = _parse_code(d.pop("code", UNSET))


        def _parse_diagnostics(data: object) -> ErrorBodyDiagnosticsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                diagnostics_type_0 = ErrorBodyDiagnosticsType0.from_dict(data)



                return diagnostics_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorBodyDiagnosticsType0 | None | Unset, data)

        diagnostics = _parse_diagnostics(d.pop("diagnostics", UNSET))


        error_body = cls(
            error=error,
            status=status,
            code=code,
            diagnostics=diagnostics,
        )


        error_body.additional_properties = d
        return error_body

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
