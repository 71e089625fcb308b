from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_body import ErrorBody
from ...models.pending_reviews import PendingReviews
from typing import cast



def _get_kwargs(
    execution_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/executions/{execution_id}/reviews".format(execution_id=quote(str(execution_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorBody | PendingReviews | None:
    if response.status_code == 200:
        response_200 = PendingReviews.from_dict(response.json())



        return response_200

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())



        return response_404

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorBody | PendingReviews]:
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

) -> Response[ErrorBody | PendingReviews]:
    """ The reviews a paused execution waits for, each with its own correlation id
    (docs/server.md, *Pending reviews*): decide any of them, in any order, with `POST
    …/resume` and its `correlationId`.

    Args:
        execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | PendingReviews]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> ErrorBody | PendingReviews | None:
    """ The reviews a paused execution waits for, each with its own correlation id
    (docs/server.md, *Pending reviews*): decide any of them, in any order, with `POST
    …/resume` and its `correlationId`.

    Args:
        execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | PendingReviews
     """


    return sync_detailed(
        execution_id=execution_id,
client=client,

    ).parsed

async def asyncio_detailed(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> Response[ErrorBody | PendingReviews]:
    """ The reviews a paused execution waits for, each with its own correlation id
    (docs/server.md, *Pending reviews*): decide any of them, in any order, with `POST
    …/resume` and its `correlationId`.

    Args:
        execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | PendingReviews]
     """


    kwargs = _get_kwargs(
        execution_id=execution_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    execution_id: str,
    *,
    client: AuthenticatedClient | Client,

) -> ErrorBody | PendingReviews | None:
    """ The reviews a paused execution waits for, each with its own correlation id
    (docs/server.md, *Pending reviews*): decide any of them, in any order, with `POST
    …/resume` and its `correlationId`.

    Args:
        execution_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | PendingReviews
     """


    return (await asyncio_detailed(
        execution_id=execution_id,
client=client,

    )).parsed
