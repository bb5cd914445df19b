"""Kafka error codes the test cluster answers with (org.apache.kafka.common.protocol.Errors)."""

NONE = 0
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INVALID_TOPIC_EXCEPTION = 17
NOT_ENOUGH_REPLICAS = 19
INVALID_REQUIRED_ACKS = 21
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
INVALID_TIMESTAMP = 32
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
INVALID_REQUEST = 42
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
POLICY_VIOLATION = 44
SASL_AUTHENTICATION_FAILED = 58
GROUP_ID_NOT_FOUND = 69
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
UNKNOWN_TOPIC_ID = 100

# Errors.message() of the authorization errors, which Kafka sends where it has no better text.
TOPIC_AUTHORIZATION_MESSAGE = "Topic authorization failed."
GROUP_AUTHORIZATION_MESSAGE = "Group authorization failed."
CLUSTER_AUTHORIZATION_MESSAGE = "Cluster authorization failed."


class KafkaApiError(Exception):
    """An operation refused with a Kafka error code (raised by the Python helpers too)."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(f"error {code}: {message}" if message else f"error {code}")
        self.code = code
        self.message = message
