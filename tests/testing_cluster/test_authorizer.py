"""The ACL authorizer: Kafka 4.0's StandardAuthorizer rules, and where each API checks them.

Sources (apache/kafka 4.0): metadata/.../authorizer/StandardAuthorizerData.java (findAclRule,
findResult), server/.../security/authorizer/AclEntry.java (supportedOperations),
core/.../server/KafkaApis.scala, core/.../server/ControllerApis.scala (KRaft brokers forward
CreateTopics, CreatePartitions, DeleteTopics and IncrementalAlterConfigs there), AuthHelper.scala.
"""

from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResourceType
from kafka.errors import NodeNotReadyError
from kafka.protocol.admin import (
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteGroupsRequest,
    DeleteRecordsRequest,
    DeleteTopicsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeGroupsRequest,
    DescribeLogDirsRequest,
    IncrementalAlterConfigsRequest,
    ListGroupsRequest,
)
from kafka.protocol.consumer import ListOffsetsRequest, OffsetFetchRequest, OffsetForLeaderEpochRequest
from kafka.protocol.metadata import FindCoordinatorRequest, MetadataRequest

from reconciler.testing import Acl, TestCluster

NONE, UNKNOWN_TOPIC, TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED, UNKNOWN_TOPIC_ID = 0, 3, 29, 30, 31, 100
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12
TOPIC_RESOURCE, BROKER_RESOURCE = ConfigResourceType.TOPIC, ConfigResourceType.BROKER
SET = 0
ZERO_UUID = uuid.UUID(int=0)
# Each test takes fresh principals (the alice and bob fixtures), so ACLs never leak between tests.
USERS = {"admin": "admin-pw", **{f"user{i}": f"pw-{i}" for i in range(60)}}
_fresh_users = iter(sorted(set(USERS) - {"admin"}))


@pytest.fixture(scope="module")
def secured():
    """SASL/PLAIN users on one broker; admin is a super user, the others get only their ACLs."""
    with TestCluster(brokers=1, sasl_users=USERS, super_users={"admin"}) as c:
        yield c


@pytest.fixture(scope="module")
def clients(secured):
    opened: dict[str, KafkaAdminClient] = {}

    def client(user):
        if user not in opened:
            opened[user] = KafkaAdminClient(
                bootstrap_servers=secured.bootstrap_servers,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="PLAIN",
                sasl_plain_username=user,
                sasl_plain_password=USERS[user],
                request_timeout_ms=10000,
            )
        return opened[user]

    yield client
    for admin in opened.values():
        admin.close()


@pytest.fixture(scope="module")
def as_user(clients):
    """as_user(name)(request) -> the response, sent over that user's own SASL connection."""

    def sender(user):
        admin = clients(user)

        def send(request):
            for _ in range(50):
                try:
                    return admin._manager.run(admin._manager.send, request, 1)
                except NodeNotReadyError:
                    time.sleep(0.05)
            return admin._manager.run(admin._manager.send, request, 1)

        return send

    return sender


@pytest.fixture
def alice():
    return next(_fresh_users)


@pytest.fixture
def bob():
    return next(_fresh_users)


@pytest.fixture
def topic(secured, unique):
    name = unique("authz")
    secured.create_topic(name, partitions=1)
    return name


def metadata(send, names=None, version=12, **flags):
    topics = None if names is None else [MetadataRequest.MetadataRequestTopic(name=n) for n in names]
    return send(MetadataRequest(version=version, topics=topics, allow_auto_topic_creation=False, **flags))


# -- the authorizer's rules (StandardAuthorizerData.findAclRule / findResult) -----------------


def test_without_acls_or_super_users_there_is_no_authorizer_and_everything_is_allowed(send, cluster, unique):
    """No authorizer.class.name: AuthHelper.authorize is always true and authorizedOperations
    returns AclEntry.supportedOperations (CLUSTER: no token operations)."""
    name = unique()
    cluster.create_topic(name)
    [t] = send(
        MetadataRequest(
            version=10,
            topics=[MetadataRequest.MetadataRequestTopic(name=name)],
            include_cluster_authorized_operations=True,
            include_topic_authorized_operations=True,
        ),
        1,
    ).topics
    assert t.error_code == NONE
    assert t.authorized_operations == {READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS}
    described = send(DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=1), 1)
    assert described.authorized_operations == {
        CREATE,
        ALTER,
        DESCRIBE,
        CLUSTER_ACTION,
        DESCRIBE_CONFIGS,
        ALTER_CONFIGS,
        IDEMPOTENT_WRITE,
    }


def test_super_user_may_do_anything_and_no_acl_means_denied(secured, as_user, topic, bob):
    """StandardAuthorizerData.authorize: super.users first; with no matching ACL the default rule
    is DENIED (allow.everyone.if.no.acl.found=false)."""
    assert [t.name for t in metadata(as_user("admin"), [topic]).topics] == [topic]
    assert metadata(as_user(bob), [topic]).topics[0].error_code == TOPIC_DENIED


def test_prefixed_and_wildcard_acls_and_the_wildcard_principal(secured, as_user, unique, alice, bob):
    """checkSection: PREFIXED names match by prefix, a LITERAL name only exactly, LITERAL "*" any
    name; findResult: "User:*" matches every principal."""
    pre, exact, other = unique("pre-x"), unique("lit"), unique("zz")
    for name in (pre, exact, exact + "-longer", other):
        secured.create_topic(name)
    secured.allow(alice, "topic", pre[:5], "DESCRIBE", pattern="prefixed")
    secured.allow(alice, "topic", exact, "DESCRIBE")
    seen = {t.name: t.error_code for t in metadata(as_user(alice), [pre, exact, exact + "-longer", other]).topics}
    assert seen == {pre: NONE, exact: NONE, exact + "-longer": TOPIC_DENIED, other: TOPIC_DENIED}
    secured.allow("User:*", "topic", other, "DESCRIBE")
    assert metadata(as_user(bob), [other]).topics[0].error_code == NONE


def test_read_write_delete_alter_imply_describe_but_a_deny_of_read_does_not_deny_it(secured, as_user, unique, alice):
    """findResult: ALLOW of READ/WRITE/DELETE/ALTER implies DESCRIBE (IMPLIES_DESCRIBE); the
    implication holds for ALLOW ACLs only."""
    names = {op: unique(op.lower()) for op in ("READ", "WRITE", "DELETE", "ALTER", "CREATE")}
    for op, name in names.items():
        secured.create_topic(name)
        secured.allow(alice, "topic", name, op)
    codes = {t.name: t.error_code for t in metadata(as_user(alice), list(names.values())).topics}
    assert codes == {
        names["READ"]: NONE,
        names["WRITE"]: NONE,
        names["DELETE"]: NONE,
        names["ALTER"]: NONE,
        names["CREATE"]: TOPIC_DENIED,
    }
    secured.deny(alice, "topic", names["READ"], "READ")
    assert metadata(as_user(alice), [names["READ"]]).topics[0].error_code == NONE


def test_a_deny_wins_over_every_allow(secured, as_user, topic, alice):
    """findAclRule: a matching DENY ends the search with DENIED; DENY ALL denies DESCRIBE too."""
    secured.allow(alice, "topic", "*", "ALL")
    secured.deny(alice, "topic", topic, "ALL")
    assert metadata(as_user(alice), [topic]).topics[0].error_code == TOPIC_DENIED


def test_acls_are_checked_against_the_anonymous_principal_without_sasl(unique):
    """Without SASL (PLAINTEXT listener) the session principal is User:ANONYMOUS."""
    with TestCluster(brokers=1, acls=[Acl("ANONYMOUS", "topic", "seen", "DESCRIBE")]) as c:
        c.create_topic("seen")
        c.create_topic("hidden")
        with KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin:
            assert admin.list_topics() == ["seen"]


# -- Metadata (KafkaApis.handleTopicMetadataRequest) ---------------------------------------------


def test_all_topics_metadata_leaves_out_topics_without_describe(secured, as_user, unique, alice):
    """ "In case of all topics, don't include topics unauthorized for Describe"."""
    visible, hidden = unique("vis"), unique("hid")
    secured.create_topic(visible)
    secured.create_topic(hidden)
    secured.allow(alice, "topic", visible, "DESCRIBE")
    names = {t.name for t in metadata(as_user(alice)).topics}
    assert visible in names and hidden not in names


def test_a_named_topic_without_describe_answers_topic_authorization_failed_existing_or_not(
    secured, as_user, topic, unique, alice
):
    """ "do not disclose the existence of topics unauthorized for Describe": the same answer for an
    existing and a missing topic, zero topic id, no partitions, listed after the authorized
    topics, without authorized operations."""
    mine = unique("mine")
    secured.create_topic(mine)
    secured.allow(alice, "topic", mine, "DESCRIBE")
    answer = metadata(as_user(alice), [topic, "no-such-topic", mine], include_topic_authorized_operations=True)
    assert [(t.name, t.error_code) for t in answer.topics] == [
        (mine, NONE),
        (topic, TOPIC_DENIED),
        ("no-such-topic", TOPIC_DENIED),
    ]
    for t in answer.topics[1:]:
        # kafka-python reads Uuid.ZERO_UUID as None.
        assert (t.topic_id, t.partitions, t.is_internal, t.authorized_operations) == (None, [], False, None)


def test_a_missing_topic_the_principal_may_describe_is_unknown(secured, as_user, alice):
    secured.allow(alice, "topic", "ghost", "DESCRIBE")
    assert metadata(as_user(alice), ["ghost"]).topics[0].error_code == UNKNOWN_TOPIC


def test_topic_authorized_operations_list_what_the_principal_may_do(secured, as_user, topic, alice):
    """KIP-430: AuthHelper.authorizedOperations over AclEntry.supportedOperations(TOPIC); implied
    operations count (ALTER_CONFIGS implies DESCRIBE_CONFIGS, ALTER implies DESCRIBE); not asked
    for, the field keeps its default -2147483648 (None here)."""
    for op in ("CREATE", "ALTER", "ALTER_CONFIGS"):
        secured.allow(alice, "topic", topic, op)
    [t] = metadata(as_user(alice), [topic], include_topic_authorized_operations=True).topics
    assert t.authorized_operations == {CREATE, ALTER, ALTER_CONFIGS, DESCRIBE, DESCRIBE_CONFIGS}
    assert metadata(as_user(alice), [topic]).topics[0].authorized_operations is None


def test_cluster_authorized_operations_need_cluster_describe(secured, as_user, bob):
    """Metadata v8-10 and DescribeCluster (AuthHelper.computeDescribeClusterResponse): without
    DESCRIBE on the cluster the bitfield is 0, with it the allowed cluster operations."""

    def cluster_ops(user):
        v10 = metadata(as_user(user), [], version=10, include_cluster_authorized_operations=True)
        described = as_user(user)(DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=1))
        assert described.error_code == NONE
        assert v10.authorized_operations == described.authorized_operations
        return described.authorized_operations

    assert cluster_ops(bob) == set()
    secured.allow(bob, "cluster", "kafka-cluster", ["DESCRIBE", "ALTER_CONFIGS"])
    assert cluster_ops(bob) == {DESCRIBE, ALTER_CONFIGS, DESCRIBE_CONFIGS}


# -- controller-bound APIs (ControllerApis) -----------------------------------------------------


def create(send, name, validate_only=False, configs=()):
    T = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest(
        topics=[
            T(
                name=name,
                num_partitions=2,
                replication_factor=1,
                assignments=[],
                configs=[T.CreatableTopicConfig(name=k, value=v) for k, v in configs],
            )
        ],
        timeout_ms=5000,
        validate_only=validate_only,
    )
    return send(request).topics[0]


def test_create_topics_needs_create_on_the_topic_or_the_cluster(secured, as_user, unique, bob):
    """ControllerApis.createTopics: CREATE on CLUSTER or on the TOPIC, else TOPIC_AUTHORIZATION_FAILED
    "Authorization failed." without validating (validate_only alike); nothing is created."""
    name = unique("new")
    for validate_only in (True, False):
        r = create(as_user(bob), name, validate_only)
        assert (r.error_code, r.error_message) == (TOPIC_DENIED, "Authorization failed.")
    assert name not in secured.topic_names()
    secured.allow(bob, "topic", "bobs-", "CREATE", pattern="prefixed")
    assert create(as_user(bob), unique("bobs-")).error_code == NONE
    secured.allow(bob, "cluster", "kafka-cluster", "CREATE")
    assert create(as_user(bob), name).error_code == NONE and name in secured.topic_names()


def test_a_created_topic_without_describe_configs_hides_its_settings(secured, as_user, unique, alice):
    """ReplicationControlManager.createTopic: a topic the principal may create but not
    DESCRIBE_CONFIGS is created with topic_config_error_code TOPIC_AUTHORIZATION_FAILED and no
    partition count, replication factor or configs."""
    secured.allow(alice, "topic", "quiet-", "CREATE", pattern="prefixed")
    r = create(as_user(alice), unique("quiet-"), configs=[("retention.ms", "1000")])
    assert (r.error_code, r.topic_config_error_code) == (NONE, TOPIC_DENIED)
    assert (r.num_partitions, r.replication_factor, r.configs) == (-1, -1, [])


def test_create_partitions_needs_alter(secured, as_user, topic, alice):
    """ControllerApis.createPartitions: TOPIC_AUTHORIZATION_FAILED (no message) before any check,
    so a missing topic answers the same."""
    T = CreatePartitionsRequest.CreatePartitionsTopic

    def grow(name):
        return as_user(alice)(
            CreatePartitionsRequest(topics=[T(name=name, count=3, assignments=None)], timeout_ms=5000, validate_only=False)
        ).results[0]

    for name in (topic, "no-such-topic"):
        r = grow(name)
        assert (r.error_code, r.error_message) == (TOPIC_DENIED, None)
    assert secured.partition_count(topic) == 1
    secured.allow(alice, "topic", topic, "ALTER")
    assert grow(topic).error_code == NONE and secured.partition_count(topic) == 3


def alter(send, name, value, validate_only=False, resource_type=TOPIC_RESOURCE):
    request = IncrementalAlterConfigsRequest(
        resources=[(resource_type, name, [("retention.ms", SET, value)])], validate_only=validate_only
    )
    r = send(request).responses[0]
    return r.error_code, r.error_message


def test_incremental_alter_configs_needs_alter_configs_also_in_validate_only(secured, as_user, topic, alice):
    """ControllerApis.handleIncrementalAlterConfigs / authorizeAlterResource: ALTER_CONFIGS on the
    topic (a broker: on the cluster, CLUSTER_AUTHORIZATION_FAILED), checked before validation;
    the message is Errors.message()."""
    for validate_only in (True, False):
        assert alter(as_user(alice), topic, "1000", validate_only) == (TOPIC_DENIED, "Topic authorization failed.")
        assert alter(as_user(alice), topic, "not-a-number", validate_only)[0] == TOPIC_DENIED
    assert alter(as_user(alice), "1", "1000", resource_type=BROKER_RESOURCE) == (CLUSTER_DENIED, "Cluster authorization failed.")
    assert "retention.ms" not in secured.topic_configs(topic)
    secured.allow(alice, "topic", topic, "ALTER_CONFIGS")
    assert alter(as_user(alice), topic, "1000") == (NONE, None)
    assert secured.topic_configs(topic)["retention.ms"] == "1000"


def test_describe_configs_needs_describe_configs_which_alter_configs_implies(secured, as_user, unique, bob):
    """KafkaApis.handleDescribeConfigsRequest: TOPIC_AUTHORIZATION_FAILED (a broker:
    CLUSTER_AUTHORIZATION_FAILED) with no configs, after the described resources."""
    denied, implied = unique("dc"), unique("dc")
    for name in (denied, implied):
        secured.create_topic(name)
    secured.allow(bob, "topic", implied, "ALTER_CONFIGS")
    results = as_user(bob)(
        DescribeConfigsRequest(
            resources=[(TOPIC_RESOURCE, denied, None), (BROKER_RESOURCE, "1", None), (TOPIC_RESOURCE, implied, None)],
            include_synonyms=False,
        )
    ).results
    assert [(r.resource_name, r.error_code, r.error_message) for r in results] == [
        (implied, NONE, None),
        (denied, TOPIC_DENIED, "Topic authorization failed."),
        ("1", CLUSTER_DENIED, "Cluster authorization failed."),
    ]
    assert results[0].configs and results[1].configs == []


def test_delete_topics_hides_existence_from_a_principal_without_describe(secured, as_user, unique, alice):
    """ControllerApis.deleteTopics: by name, no DESCRIBE -> TOPIC_AUTHORIZATION_FAILED existing or
    not; DESCRIBE but no DELETE -> UNKNOWN_TOPIC_OR_PARTITION for a missing topic, else
    TOPIC_AUTHORIZATION_FAILED; by id, an unknown id is UNKNOWN_TOPIC_ID and an undescribable
    topic's name is not returned."""
    kept, seen, gone = unique("del"), unique("del"), unique("del")
    for name in (kept, seen, gone):
        secured.create_topic(name)
    secured.allow(alice, "topic", seen, "DESCRIBE")
    secured.allow(alice, "topic", "missing-but-seen", "DESCRIBE")
    secured.allow(alice, "topic", gone, "DELETE")
    S = DeleteTopicsRequest.DeleteTopicState

    def delete(**target):
        [r] = as_user(alice)(DeleteTopicsRequest(topics=[S(**target)], timeout_ms=5000)).responses
        return r.name, r.error_code

    assert delete(name=kept, topic_id=ZERO_UUID) == (kept, TOPIC_DENIED)
    assert delete(name="no-such-topic", topic_id=ZERO_UUID) == ("no-such-topic", TOPIC_DENIED)
    assert delete(name="missing-but-seen", topic_id=ZERO_UUID) == ("missing-but-seen", UNKNOWN_TOPIC)
    assert delete(name=seen, topic_id=ZERO_UUID) == (seen, TOPIC_DENIED)
    assert delete(name=None, topic_id=uuid.UUID(secured.topic_id(kept))) == (None, TOPIC_DENIED)
    assert delete(name=None, topic_id=uuid.uuid4()) == (None, UNKNOWN_TOPIC_ID)
    assert delete(name=gone, topic_id=ZERO_UUID) == (gone, NONE)
    assert {kept, seen} <= set(secured.topic_names()) and gone not in secured.topic_names()


# -- partition APIs (KafkaApis) -----------------------------------------------------------------


def test_delete_records_needs_delete_per_partition(secured, as_user, topic, alice):
    """KafkaApis.handleDeleteRecordsRequest: TOPIC_AUTHORIZATION_FAILED and low watermark -1 for
    each partition, before the topic's existence is looked at."""
    secured.produce(topic, 0, [1, 2, 3])
    for name in (topic, "no-such-topic"):
        r = as_user(alice)(DeleteRecordsRequest(topics=[(name, [(0, 2)])], timeout_ms=5000))
        p = r.topics[0].partitions[0]
        assert (p.error_code, p.low_watermark) == (TOPIC_DENIED, -1)
    assert secured.partition(topic, 0).log_start_offset == 0
    secured.allow(alice, "topic", topic, "DELETE")
    r = as_user(alice)(DeleteRecordsRequest(topics=[(topic, [(0, 2)])], timeout_ms=5000))
    assert (r.topics[0].partitions[0].error_code, r.topics[0].partitions[0].low_watermark) == (NONE, 2)


def test_list_offsets_needs_describe(secured, as_user, topic, bob):
    """KafkaApis.handleListOffsetRequest: buildErrorResponse(TOPIC_AUTHORIZATION_FAILED) per
    partition: offset and timestamp -1."""
    T = ListOffsetsRequest.ListOffsetsTopic

    def earliest(user):
        request = ListOffsetsRequest(
            replica_id=-1,
            isolation_level=0,
            topics=[T(name=topic, partitions=[T.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-2)])],
        )
        p = as_user(user)(request).topics[0].partitions[0]
        return p.error_code, p.offset, p.timestamp, p.leader_epoch

    assert earliest(bob) == (TOPIC_DENIED, -1, -1, -1)
    secured.allow(bob, "topic", topic, "READ")
    assert earliest(bob) == (NONE, 0, -1, 0)


def test_offset_for_leader_epoch_accepts_cluster_action_or_topic_describe(secured, as_user, topic, alice, bob):
    """KafkaApis.handleOffsetForLeaderEpochRequest (KIP-320): CLUSTER_ACTION on the cluster
    (replicas) or DESCRIBE on the topic (clients), else TOPIC_AUTHORIZATION_FAILED, -1/-1."""
    T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic

    def end_offset(user):
        request = OffsetForLeaderEpochRequest(
            replica_id=-1,
            topics=[
                T(topic=topic, partitions=[T.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)])
            ],
        )
        p = as_user(user)(request).topics[0].partitions[0]
        return p.error_code, p.leader_epoch, p.end_offset

    assert end_offset(alice) == (TOPIC_DENIED, -1, -1)
    assert end_offset(bob) == (TOPIC_DENIED, -1, -1)
    secured.allow(alice, "topic", topic, "DESCRIBE")
    secured.allow(bob, "cluster", "kafka-cluster", "CLUSTER_ACTION")
    assert end_offset(alice) == end_offset(bob) == (NONE, 0, 0)


def test_describe_log_dirs_needs_cluster_describe(unique):
    """KafkaApis.handleDescribeLogDirsRequest: without DESCRIBE on the cluster, no results and
    (v3+) the top-level error CLUSTER_AUTHORIZATION_FAILED."""
    with (
        TestCluster(brokers=1, sasl_users={"carol": "pw"}, acls=[]) as c,
        KafkaAdminClient(
            bootstrap_servers=c.bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="carol",
            sasl_plain_password="pw",
        ) as admin,
    ):
        c.create_topic("sized")

        def log_dirs():
            return admin._manager.run(admin._manager.send, DescribeLogDirsRequest(version=4, topics=None), 1)

        r = log_dirs()
        assert (r.error_code, r.results) == (CLUSTER_DENIED, [])
        c.allow("carol", "cluster", "kafka-cluster", "DESCRIBE")
        r = log_dirs()
        assert r.error_code == NONE and [t.name for t in r.results[0].topics] == ["sized"]


# -- groups (KafkaApis) -------------------------------------------------------------------------


def test_find_coordinator_needs_group_describe(secured, as_user, bob):
    """KafkaApis.getCoordinator: GROUP_AUTHORIZATION_FAILED with Node.noNode (-1, "", -1)."""
    [c] = as_user(bob)(FindCoordinatorRequest(key_type=0, coordinator_keys=["bobs-group"])).coordinators
    assert (c.error_code, c.node_id, c.host, c.port) == (GROUP_DENIED, -1, "", -1)
    secured.allow(bob, "group", "bobs-group", "DESCRIBE")
    [c] = as_user(bob)(FindCoordinatorRequest(key_type=0, coordinator_keys=["bobs-group"])).coordinators
    assert (c.error_code, c.node_id) == (NONE, 1)


def test_offset_fetch_needs_group_describe_and_topic_describe(secured, as_user, unique, alice):
    """KafkaApis.handleOffsetFetchRequest: no DESCRIBE on the group -> the group's error; an
    all-topics fetch leaves out undescribable topics, a named one gets TOPIC_AUTHORIZATION_FAILED
    (offset -1) per partition after the others."""
    group, mine, theirs = unique("grp"), unique("mine"), unique("theirs")
    for name in (mine, theirs):
        secured.create_topic(name)
    secured.commit_offsets(group, {(mine, 0): 5, (theirs, 0): 7})
    G = OffsetFetchRequest.OffsetFetchRequestGroup

    def fetch(topics):
        request = OffsetFetchRequest(version=8, groups=[G(group_id=group, topics=topics)], require_stable=False)
        [g] = as_user(alice)(request).groups
        return g.error_code, [(t.name, [(p.committed_offset, p.error_code) for p in t.partitions]) for t in g.topics]

    assert fetch(None) == (GROUP_DENIED, [])
    secured.allow(alice, "group", group, "DESCRIBE")
    secured.allow(alice, "topic", mine, "READ")
    assert fetch(None) == (NONE, [(mine, [(5, NONE)])])
    T = G.OffsetFetchRequestTopics
    assert fetch([T(name=theirs, partition_indexes=[0]), T(name=mine, partition_indexes=[0])]) == (
        NONE,
        [(mine, [(5, NONE)]), (theirs, [(-1, TOPIC_DENIED)])],
    )


def test_list_describe_and_delete_groups_check_each_group(secured, as_user, unique, bob):
    """handleListGroupsRequest: DESCRIBE on the cluster lists all, else only describable groups;
    handleDescribeGroupsRequest: GROUP_AUTHORIZATION_FAILED groups first (groupError: empty state);
    handleDeleteGroupsRequest: DELETE on the group, refused ones last."""
    visible, hidden = unique("g-vis"), unique("g-hid")
    for group in (visible, hidden):
        secured.commit_offsets(group, {})
    secured.allow(bob, "group", visible, "DESCRIBE")
    listed = {g.group_id for g in as_user(bob)(ListGroupsRequest(version=4, states_filter=[])).groups}
    assert visible in listed and hidden not in listed
    described = as_user(bob)(DescribeGroupsRequest(groups=[visible, hidden], include_authorized_operations=True))
    assert [(g.group_id, g.error_code, g.group_state) for g in described.groups] == [
        (hidden, GROUP_DENIED, ""),
        (visible, NONE, "Empty"),
    ]
    assert described.groups[1].authorized_operations == {DESCRIBE}
    deleted = as_user(bob)(DeleteGroupsRequest(groups_names=[hidden]))
    assert [(r.group_id, r.error_code) for r in deleted.results] == [(hidden, GROUP_DENIED)]
