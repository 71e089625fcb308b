from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.execution_event_type_0 import ExecutionEventType0
from ...models.execution_event_type_1 import ExecutionEventType1
from ...models.execution_event_type_2 import ExecutionEventType2
from ...models.execution_event_type_3 import ExecutionEventType3
from ...models.execution_event_type_4 import ExecutionEventType4
from ...models.execution_event_type_5 import ExecutionEventType5
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    execution_id: str,
    *,
    last_event_id: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id



    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/executions/{execution_id}/events".format(execution_id=quote(str(execution_id), safe=""),),
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5 | None:
    if response.status_code == 200:
        def _parse_response_200(data: object) -> ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_execution_event_type_0 = ExecutionEventType0.from_dict(data)



                return componentsschemas_execution_event_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_execution_event_type_1 = ExecutionEventType1.from_dict(data)



                return componentsschemas_execution_event_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_execution_event_type_2 = ExecutionEventType2.from_dict(data)



                return componentsschemas_execution_event_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_execution_event_type_3 = ExecutionEventType3.from_dict(data)



                return componentsschemas_execution_event_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_execution_event_type_4 = ExecutionEventType4.from_dict(data)



                return componentsschemas_execution_event_type_4
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_execution_event_type_5 = ExecutionEventType5.from_dict(data)



            return componentsschemas_execution_event_type_5

        response_200 = _parse_response_200(response.text)

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())



        return response_404

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: None | str | Unset = UNSET,

) -> Response[ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5]:
    """ SSE of one execution: replay after `Last-Event-ID`, then live until it pauses or ends.

    Args:
        execution_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,
last_event_id=last_event_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: None | str | Unset = UNSET,

) -> ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5 | None:
    """ SSE of one execution: replay after `Last-Event-ID`, then live until it pauses or ends.

    Args:
        execution_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5
     """


    return sync_detailed(
        execution_id=execution_id,
client=client,
last_event_id=last_event_id,

    ).parsed

async def asyncio_detailed(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: None | str | Unset = UNSET,

) -> Response[ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5]:
    """ SSE of one execution: replay after `Last-Event-ID`, then live until it pauses or ends.

    Args:
        execution_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,
last_event_id=last_event_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: None | str | Unset = UNSET,

) -> ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5 | None:
    """ SSE of one execution: replay after `Last-Event-ID`, then live until it pauses or ends.

    Args:
        execution_id (str):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ExecutionEventType0 | ExecutionEventType1 | ExecutionEventType2 | ExecutionEventType3 | ExecutionEventType4 | ExecutionEventType5
     """


    return (await asyncio_detailed(
        execution_id=execution_id,
client=client,
last_event_id=last_event_id,

    )).parsed
