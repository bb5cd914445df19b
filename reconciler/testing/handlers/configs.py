"""DescribeConfigs, IncrementalAlterConfigs and (legacy) AlterConfigs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import authorizer as acl
from .. import controller, errors, protocol
from ..configs import describe_broker, effective_topic_configs, wire_type
from ..errors import KafkaApiError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from kafka.protocol.data_container import DataContainer

    from ..configs import ConfigValue
    from ..context import RequestContext

DESCRIBE_CONFIGS, ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 44
TOPIC, BROKER = 2, 4


def _authorization_error(ctx: RequestContext, operation: int, resource_type: int, name: str) -> tuple[int, str] | None:
    """A topic needs the operation on itself, a broker on the cluster (KafkaApis
    .handleDescribeConfigsRequest, ControllerApis.authorizeAlterResource)."""
    if resource_type == TOPIC and not ctx.allowed(operation, acl.TOPIC, name):
        return errors.TOPIC_AUTHORIZATION_FAILED, errors.TOPIC_AUTHORIZATION_MESSAGE
    if resource_type == BROKER and not ctx.allowed(operation, acl.CLUSTER, acl.CLUSTER_NAME):
        return errors.CLUSTER_AUTHORIZATION_FAILED, errors.CLUSTER_AUTHORIZATION_MESSAGE
    return None


def describe_configs(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(DESCRIBE_CONFIGS, ctx.version, throttle_time_ms=0)
    R = response.DescribeConfigsResult
    E = R.DescribeConfigsResourceResult
    S = E.DescribeConfigsSynonym
    response.results = []
    refused = []
    for resource in request.resources:
        result = R(
            error_code=errors.NONE,
            error_message=None,
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
            configs=[],
        )
        denied = _authorization_error(ctx, acl.DESCRIBE_CONFIGS, resource.resource_type, resource.resource_name)
        if denied is not None:
            # Refused resources come after the described ones, as Kafka concatenates them.
            result.error_code, result.error_message = denied
            refused.append(result)
            continue
        response.results.append(result)
        try:
            values = _resource_configs(ctx, resource.resource_type, resource.resource_name)
        except KafkaApiError as e:
            result.error_code, result.error_message = e.code, e.message
            continue
        wanted = None if resource.configuration_keys is None else set(resource.configuration_keys)
        for v in values:
            # Keys the broker does not know are silently left out, as Kafka does.
            if wanted is not None and v.name not in wanted:
                continue
            result.configs.append(
                E(
                    name=v.name,
                    value=None if v.sensitive else v.value,
                    read_only=v.read_only,
                    config_source=v.source,
                    is_sensitive=v.sensitive,
                    config_type=wire_type(v.name),
                    documentation=None,
                    synonyms=[S(name=n, value=None if v.sensitive else value, source=source) for n, value, source in v.synonyms]
                    if request.include_synonyms
                    else [],
                )
            )
    response.results.extend(refused)
    return response


def _resource_configs(ctx: RequestContext, resource_type: int, name: str) -> list[ConfigValue]:
    state = ctx.state
    if resource_type == TOPIC:
        topic = state.views.topic(state.topics, ctx.broker_id, name)
        if topic is None:
            raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.")
        return effective_topic_configs(topic.configs, state.broker_configs)
    if resource_type == BROKER:
        if name not in ("", str(ctx.broker_id)):
            raise KafkaApiError(errors.INVALID_REQUEST, f"Unexpected broker id, expected {ctx.broker_id} but received {name}")
        dynamic = state.views.broker_configs(state.dynamic_broker_configs, ctx.broker_id)
        return describe_broker(state.broker_configs, dynamic.get("", {}), dynamic.get(name, {}) if name else {})
    raise KafkaApiError(errors.INVALID_REQUEST, f"Unsupported resource type {resource_type}")


def incremental_alter_configs(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    """KafkaApis.handleIncrementalAlterConfigsRequest: the receiving broker checks BROKER resources
    itself first (ConfigAdminManager.preprocess: its own id or "", then the values, before any
    authorization); what passes goes on to the controller, and the answers keep their places."""
    response = protocol.new_response(INCREMENTAL_ALTER_CONFIGS, ctx.version, throttle_time_ms=0)
    R = response.AlterConfigsResourceResponse

    def ops(resource: DataContainer) -> list[tuple[str, int, str | None]]:
        return [(c.name, c.config_operation, c.value) for c in resource.configs]

    preprocessed: dict[int, KafkaApiError] = {}
    for i, resource in enumerate(request.resources):
        if resource.resource_type == BROKER:
            try:
                controller.check_broker_config_ops(ctx.broker_id, resource.resource_name, ops(resource))
            except KafkaApiError as e:
                preprocessed[i] = e

    def change(resource: DataContainer) -> None:
        validate_only = request.validate_only or not ctx.apply
        if resource.resource_type == BROKER:
            controller.incremental_alter_broker_configs(ctx.state, resource.resource_name, ops(resource), validate_only)
        else:
            controller.incremental_alter_topic_configs(ctx.state, resource.resource_name, ops(resource), validate_only)

    forwarded = [r for i, r in enumerate(request.resources) if i not in preprocessed]
    answers = iter(_alter_all(ctx, R, forwarded, change, alterable=(TOPIC, BROKER)))
    response.responses = [
        R(
            error_code=preprocessed[i].code,
            error_message=preprocessed[i].message,
            resource_type=r.resource_type,
            resource_name=r.resource_name,
        )
        if i in preprocessed
        else next(answers)
        for i, r in enumerate(request.resources)
    ]
    return response


def alter_configs(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(ALTER_CONFIGS, ctx.version, throttle_time_ms=0)
    R = response.AlterConfigsResourceResponse

    def change(resource: DataContainer) -> None:
        controller.alter_topic_configs(
            ctx.state, resource.resource_name, {c.name: c.value for c in resource.configs}, request.validate_only or not ctx.apply
        )

    response.responses = _alter_all(ctx, R, request.resources, change, alterable=(TOPIC,))
    return response


def _alter_all(
    ctx: RequestContext,
    struct: type[DataContainer],
    resources: list[DataContainer],
    change: Callable[[DataContainer], None],
    alterable: Collection[int],
) -> list[DataContainer]:
    """ControllerApis.handleIncrementalAlterConfigs: resources the principal may not ALTER_CONFIGS
    are refused before anything is validated (validate_only too), and listed first."""
    refused, results = [], []
    for resource in resources:
        denied = _authorization_error(ctx, acl.ALTER_CONFIGS, resource.resource_type, resource.resource_name)
        if denied is not None:
            refused.append(
                struct(
                    error_code=denied[0],
                    error_message=denied[1],
                    resource_type=resource.resource_type,
                    resource_name=resource.resource_name,
                )
            )
        else:
            results.append(_alter_one(struct, resource, change, alterable))
    return refused + results


def _alter_one(
    struct: type[DataContainer], resource: DataContainer, change: Callable[[DataContainer], None], alterable: Collection[int]
) -> DataContainer:
    """Apply one resource's change; each resource succeeds or fails on its own."""
    try:
        if resource.resource_type not in alterable:
            # Only topics, and (incrementally) the dynamic broker configs in configs.py.
            raise KafkaApiError(
                errors.INVALID_REQUEST, f"Altering resource type {resource.resource_type} is not supported by the test cluster"
            )
        change(resource)
    except KafkaApiError as e:
        return struct(
            error_code=e.code, error_message=e.message, resource_type=resource.resource_type, resource_name=resource.resource_name
        )
    return struct(
        error_code=errors.NONE, error_message=None, resource_type=resource.resource_type, resource_name=resource.resource_name
    )
