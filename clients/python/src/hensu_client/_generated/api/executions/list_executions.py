from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.execution_status import ExecutionStatus
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    status: str | Unset = UNSET,
    workflow: str | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["status"] = status

    params["workflow"] = workflow

    params["since"] = since

    params["until"] = until

    params["cursor"] = cursor

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/executions",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | list[ExecutionStatus] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in (_response_200):
            response_200_item = ExecutionStatus.from_dict(response_200_item_data)



            response_200.append(response_200_item)

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())



        return response_400

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | list[ExecutionStatus]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: str | Unset = UNSET,
    workflow: str | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[ErrorBody | list[ExecutionStatus]]:
    """ One page of the tenant's executions, newest first (a hensu addition). The body stays an
    array; the next page's cursor comes in `X-Next-Cursor` and `Link: <…>; rel="next"`
    (docs/server.md, *Paging*).

    Args:
        status (str | Unset):
        workflow (str | Unset):
        since (str | Unset):
        until (str | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | list[ExecutionStatus]]
     """


    kwargs = _get_kwargs(
        status=status,
workflow=workflow,
since=since,
until=until,
cursor=cursor,
limit=limit,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    status: str | Unset = UNSET,
    workflow: str | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> ErrorBody | list[ExecutionStatus] | None:
    """ One page of the tenant's executions, newest first (a hensu addition). The body stays an
    array; the next page's cursor comes in `X-Next-Cursor` and `Link: <…>; rel="next"`
    (docs/server.md, *Paging*).

    Args:
        status (str | Unset):
        workflow (str | Unset):
        since (str | Unset):
        until (str | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | list[ExecutionStatus]
     """


    return sync_detailed(
        client=client,
status=status,
workflow=workflow,
since=since,
until=until,
cursor=cursor,
limit=limit,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: str | Unset = UNSET,
    workflow: str | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[ErrorBody | list[ExecutionStatus]]:
    """ One page of the tenant's executions, newest first (a hensu addition). The body stays an
    array; the next page's cursor comes in `X-Next-Cursor` and `Link: <…>; rel="next"`
    (docs/server.md, *Paging*).

    Args:
        status (str | Unset):
        workflow (str | Unset):
        since (str | Unset):
        until (str | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | list[ExecutionStatus]]
     """


    kwargs = _get_kwargs(
        status=status,
workflow=workflow,
since=since,
until=until,
cursor=cursor,
limit=limit,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    status: str | Unset = UNSET,
    workflow: str | Unset = UNSET,
    since: str | Unset = UNSET,
    until: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> ErrorBody | list[ExecutionStatus] | None:
    """ One page of the tenant's executions, newest first (a hensu addition). The body stays an
    array; the next page's cursor comes in `X-Next-Cursor` and `Link: <…>; rel="next"`
    (docs/server.md, *Paging*).

    Args:
        status (str | Unset):
        workflow (str | Unset):
        since (str | Unset):
        until (str | Unset):
        cursor (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | list[ExecutionStatus]
     """


    return (await asyncio_detailed(
        client=client,
status=status,
workflow=workflow,
since=since,
until=until,
cursor=cursor,
limit=limit,

    )).parsed
