from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.batch_start import BatchStart
from ...models.batch_started import BatchStarted
from ...models.error_body import ErrorBody
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body: BatchStart,
    idempotency_key: None | str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/executions/batch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> BatchStarted | ErrorBody | None:
    if response.status_code == 200:
        response_200 = BatchStarted.from_dict(response.json())



        return response_200

    if response.status_code == 202:
        response_202 = BatchStarted.from_dict(response.json())



        return response_202

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())



        return response_400

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())



        return response_404

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())



        return response_413

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())



        return response_422

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[BatchStarted | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchStart,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[BatchStarted | ErrorBody]:
    """ Batch start (a hensu addition): one run per context, stored `queued` for the workers
    (this server's and any other's on the same store) to claim within their concurrency.
    Every context is checked first; one bad context refuses the batch and queues nothing
    (docs/server.md, *Batch starts*).

    Args:
        idempotency_key (None | str | Unset):
        body (BatchStart): `POST /api/v1/executions/batch`: one workflow, a context per run.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchStarted | ErrorBody]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    body: BatchStart,
    idempotency_key: None | str | Unset = UNSET,

) -> BatchStarted | ErrorBody | None:
    """ Batch start (a hensu addition): one run per context, stored `queued` for the workers
    (this server's and any other's on the same store) to claim within their concurrency.
    Every context is checked first; one bad context refuses the batch and queues nothing
    (docs/server.md, *Batch starts*).

    Args:
        idempotency_key (None | str | Unset):
        body (BatchStart): `POST /api/v1/executions/batch`: one workflow, a context per run.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchStarted | ErrorBody
     """


    return sync_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchStart,
    idempotency_key: None | str | Unset = UNSET,

) -> Response[BatchStarted | ErrorBody]:
    """ Batch start (a hensu addition): one run per context, stored `queued` for the workers
    (this server's and any other's on the same store) to claim within their concurrency.
    Every context is checked first; one bad context refuses the batch and queues nothing
    (docs/server.md, *Batch starts*).

    Args:
        idempotency_key (None | str | Unset):
        body (BatchStart): `POST /api/v1/executions/batch`: one workflow, a context per run.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchStarted | ErrorBody]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: BatchStart,
    idempotency_key: None | str | Unset = UNSET,

) -> BatchStarted | ErrorBody | None:
    """ Batch start (a hensu addition): one run per context, stored `queued` for the workers
    (this server's and any other's on the same store) to claim within their concurrency.
    Every context is checked first; one bad context refuses the batch and queues nothing
    (docs/server.md, *Batch starts*).

    Args:
        idempotency_key (None | str | Unset):
        body (BatchStart): `POST /api/v1/executions/batch`: one workflow, a context per run.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchStarted | ErrorBody
     """


    return (await asyncio_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,

    )).parsed
