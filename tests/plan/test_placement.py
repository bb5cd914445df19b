"""Replica placement (reconciler/plan/placement.py): the cases in docs/replication.md as examples, the rules as
properties over generated clusters (hypothesis shrinks a failure to a smallest case), and the
balance and rack spread compared with every possible placement on small clusters.
"""

from __future__ import annotations

import itertools
import os
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.plan.placement import BrokerInfo, Placement, PlacementError

PROPERTIES = settings(
    max_examples=int(os.environ.get("INVARIANT_EXAMPLES", "300")),
    deadline=None,
    derandomize=not os.environ.get("INVARIANT_EXAMPLES"),
)
UNKNOWN = 99  # a replica on a broker the metadata no longer lists (gone for good, or down)


def brokers(*ids: int, racks: str = "", down: tuple[int, ...] = ()) -> list[BrokerInfo]:
    return [BrokerInfo(n, racks[i] if racks else None, alive=n not in down) for i, n in enumerate(ids)]


def loads(placed: dict[str, dict[int, list[int]]]) -> Counter[int]:
    return Counter(b for parts in placed.values() for replicas in parts.values() for b in replicas)


# -- the cases in docs/replication.md -------------------------------------------------------


def test_one_to_three_on_three_brokers_adds_the_two_others_after_the_leader():
    placement = Placement(brokers(1, 2, 3), {"orders": {0: [1], 1: [2], 2: [3]}})
    placed = placement.place("orders", 3)
    assert placed == {0: [1, 2, 3], 1: [2, 1, 3], 2: [3, 1, 2]}
    assert placement.rack_aware is False and placement.notes == ()


def test_one_to_three_balances_over_the_whole_cluster_not_only_the_topic():
    # broker 2 already holds three replicas of another topic: the new ones go to the emptiest others
    placement = Placement(brokers(1, 2, 3, 4), {"orders": {0: [1], 1: [3]}, "busy": {0: [2], 1: [2], 2: [2]}})
    assert placement.place("orders", 2) == {0: [1, 4], 1: [3, 1]}  # 4 had none; then 1 and 4 tie, lowest id


def test_three_to_two_removes_the_replica_on_the_busiest_broker_never_the_leader():
    current = {"orders": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}, "busy": {0: [3]}}
    placed = Placement(brokers(1, 2, 3), current).place("orders", 2)
    assert placed == {0: [1, 2], 1: [2, 1], 2: [3, 1]}
    assert all(placed[p][0] == current["orders"][p][0] for p in placed)


def test_three_to_two_removes_an_out_of_sync_replica_first():
    placed = Placement(brokers(1, 2, 3), {"orders": {0: [1, 2, 3]}}).place("orders", 2, isr={0: [1, 3]})
    assert placed == {0: [1, 3]}


def test_a_decrease_keeps_an_in_sync_replica_even_if_the_first_must_go():
    placed = Placement(brokers(1, 2, 3), {"orders": {0: [1, 2, 3]}}).place("orders", 1, isr={0: [3]})
    assert placed == {0: [3]}


def test_draining_broker_3_replaces_its_replicas_in_place_and_keeps_the_others():
    current = {"orders": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}}
    placement = Placement(brokers(1, 2, 3, 4), current, drain=[3])
    placed = placement.place("orders", 3)
    assert placed == {0: [1, 2, 4], 1: [2, 4, 1], 2: [4, 1, 2]}  # broker 4 takes partition 2's leadership
    assert all(3 not in r for r in placed.values())


def test_draining_with_nowhere_to_go_says_which_brokers_are_eligible():
    placement = Placement(brokers(1, 2, 3, 4, down=(4,)), {"orders": {0: [1, 2, 3]}}, drain=[3])
    with pytest.raises(PlacementError) as error:
        placement.place("orders", 3)
    assert str(error.value) == (
        "topic 'orders': replication factor 3 needs 3 brokers; 2 are eligible (1, 2; 3 is "
        "being drained; 4 is down); lower replication_factor, start or add brokers, or "
        "drain fewer"
    )


def test_racks_a_b_c_with_six_brokers_spread_every_partition_over_three_racks():
    six = brokers(1, 2, 3, 4, 5, 6, racks="aabbcc")
    current = {"orders": {p: [p % 6 + 1] for p in range(6)}}
    placement = Placement(six, current)
    placed = placement.place("orders", 3)
    rack = {b.node_id: b.rack for b in six}
    assert placement.rack_aware
    assert all(sorted(str(rack[b]) for b in r) == ["a", "b", "c"] for r in placed.values())
    assert all(placed[p][0] == current["orders"][p][0] for p in placed)
    assert set(loads({"orders": placed}).values()) == {3}


def test_racks_a_b_c_shrinking_from_four_removes_the_doubled_rack():
    six = brokers(1, 2, 3, 4, 5, 6, racks="aabbcc")
    assert Placement(six, {"orders": {0: [1, 2, 3, 5]}}).place("orders", 3) == {0: [1, 3, 5]}


def test_some_brokers_without_a_rack_turn_racks_off_and_say_so():
    placement = Placement(brokers(1, 2, racks="ab") + [BrokerInfo(3, None)], {"orders": {0: [1]}})
    assert placement.rack_aware is False
    assert placement.notes == (
        "placement ignores racks: broker 3 has no rack while 1, 2 have one; set broker.rack "
        "on every broker for rack-aware placement",
    )


def test_several_topics_placed_through_one_placement_share_the_balance():
    placement = Placement(brokers(1, 2, 3, 4), {"a": {0: [1], 1: [2]}, "b": {0: [1], 1: [2]}})
    placed = {"a": placement.place("a", 2), "b": placement.place("b", 2)}
    assert placed == {"a": {0: [1, 3], 1: [2, 4]}, "b": {0: [1, 3], 1: [2, 4]}}
    assert sorted(loads(placed).values()) == [2, 2, 2, 2]


def test_pinned_replica_lists_are_used_as_they_are_and_the_others_placed():
    placement = Placement(brokers(1, 2, 3), {"orders": {0: [1], 1: [2]}})
    assert placement.place("orders", 2, pinned={0: [3, 2]}) == {0: [3, 2], 1: [2, 1]}


def test_bad_pinned_lists_are_named_by_partition_all_at_once():
    placement = Placement(brokers(1, 2, 3, 4, down=(4,)), {"orders": {0: [1], 1: [2], 2: [3]}}, drain=[3])
    with pytest.raises(PlacementError) as error:
        placement.place("orders", 2, pinned={0: [1, 1], 1: [2, 9], 2: [2], 5: [1, 2], 3: [4, 1], 4: [3, 1]})
    assert str(error.value) == (
        "topic 'orders': partition 0: replica_assignment [1, 1] names broker 1 more than once; "
        "partition 1: replica_assignment [2, 9] names broker 9, not in the cluster (brokers 1, 2, 3, 4); "
        "partition 2: replica_assignment [2] has 1 replica, but replication_factor is 2; "
        "partition 3: replica_assignment [4, 1] names a partition the topic does not have (it has 0, 1, 2); "
        "partition 4: replica_assignment [3, 1] names a partition the topic does not have (it has 0, 1, 2); "
        "partition 5: replica_assignment [1, 2] names a partition the topic does not have (it has 0, 1, 2). "
        "Correct replica_assignment in the manifest (one list of distinct, live, not drained broker ids per "
        "partition, as long as replication_factor)"
    )


def test_pinning_a_drained_or_down_broker_is_refused():
    placement = Placement(brokers(1, 2, 3, 4, down=(4,)), {"orders": {0: [1], 1: [2]}}, drain=[3])
    with pytest.raises(
        PlacementError,
        match=r"partition 0: replica_assignment \[1, 3\] names broker 3, which is "
        r"being drained; partition 1: replica_assignment \[2, 4\] adds broker "
        r"4, which is down",
    ):
        placement.place("orders", 2, pinned={0: [1, 3], 1: [2, 4]})


def test_impossible_requests_are_errors_with_what_to_do():
    placement = Placement(brokers(1, 2, 3), {"orders": {0: [1]}})
    with pytest.raises(PlacementError, match=r"replication factor 0 is not possible; .* set replication_factor to 1"):
        placement.place("orders", 0)
    with pytest.raises(PlacementError, match=r"replication factor 4 needs 4 brokers; 3 are eligible \(1, 2, 3\)"):
        placement.place("orders", 4)
    with pytest.raises(PlacementError, match="'payments' is not on the cluster"):
        placement.place("payments", 3)


def test_a_broker_down_blocks_only_what_needs_it():
    placement = Placement(brokers(1, 2, 3, down=(3,)), {"orders": {0: [1, 2, 3]}, "small": {0: [1]}})
    assert placement.place("orders", 3) == {0: [1, 2, 3]}  # nothing to add: the replica on 3 stays
    assert placement.place("orders", 2) == {0: [1, 2]}  # the replica on the broker that is down goes first
    with pytest.raises(PlacementError, match=r"3 needs 3 brokers; 2 are eligible \(1, 2; 3 is down\)"):
        placement.place("small", 3)


# -- generated clusters --------------------------------------------------------------------


@st.composite
def clusters(draw, racks: str | None = None, everyone_up: bool = False, drains: bool = True, isr: bool = True):
    """(brokers, current, drain, topic, replication factor, isr or None): up to 7 brokers with
    scattered ids, up to 3 topics of up to 5 partitions, replicas now and then on a broker that is
    down or not listed at all."""
    ids = draw(st.lists(st.integers(1, 12), min_size=1, max_size=7, unique=True))
    mode = racks or draw(st.sampled_from(["none", "all", "mixed"]))
    rack_of = {n: draw(st.sampled_from("abc")) for n in ids}
    if mode == "mixed":
        rack_of[draw(st.sampled_from(ids))] = None
    down = set() if everyone_up else set(draw(st.lists(st.sampled_from(ids), max_size=1)))
    cluster = [BrokerInfo(n, rack_of[n] if mode != "none" else None, alive=n not in down) for n in ids]
    drain = draw(st.lists(st.sampled_from(ids), max_size=1)) if drains else []
    hosts = ids if everyone_up else [*ids, UNKNOWN]
    replica_list = st.lists(st.sampled_from(hosts), min_size=1, max_size=min(3, len(hosts)), unique=True)
    current = {
        f"t{t}": dict(enumerate(draw(st.lists(replica_list, min_size=1, max_size=5)))) for t in range(draw(st.integers(1, 3)))
    }
    topic = draw(st.sampled_from(sorted(current)))
    replication_factor = draw(st.integers(1, len(ids)))  # more than are eligible now and then: refusals
    in_sync = None
    if isr and draw(st.booleans()):
        in_sync = {p: draw(st.lists(st.sampled_from(r), max_size=len(r), unique=True)) for p, r in current[topic].items()}
    return cluster, current, drain, topic, replication_factor, in_sync


def eligible(cluster, drain) -> set[int]:
    return {b.node_id for b in cluster if b.alive and b.node_id not in drain}


def place(case):
    """The placement of a generated case, or None where it is refused (checked to be right to refuse)."""
    cluster, current, drain, topic, replication_factor, isr = case
    try:
        return Placement(cluster, current, drain=drain).place(topic, replication_factor, isr=isr)
    except PlacementError:
        needs = any(len([b for b in r if b not in drain]) < replication_factor for r in current[topic].values())
        assert needs and replication_factor > len(eligible(cluster, drain))
        return None


def is_subsequence(short: list[int], long: list[int]) -> bool:
    rest = iter(long)
    return all(b in rest for b in short)


@PROPERTIES
@given(clusters())
def test_every_list_is_as_long_as_asked_without_duplicates_and_new_replicas_only_on_eligible_brokers(case):
    cluster, current, drain, topic, replication_factor, _ = case
    placed = place(case)
    if placed is None:
        return
    assert sorted(placed) == sorted(current[topic])
    for partition, after in placed.items():
        assert len(after) == replication_factor
        assert len(set(after)) == len(after)
        assert set(after) - set(current[topic][partition]) <= eligible(cluster, drain)
        assert not set(after) & set(drain)


@PROPERTIES
@given(clusters())
def test_movement_is_minimal_and_the_first_replica_stays(case):
    _, current, drain, topic, replication_factor, isr = case
    placed = place(case)
    if placed is None:
        return
    for partition, after in placed.items():
        before = current[topic][partition]
        kept = [b for b in before if b not in drain]
        if not drain:
            assert len(set(after) ^ set(before)) == abs(replication_factor - len(before))
        if len(kept) >= replication_factor:  # only removals
            assert is_subsequence(after, kept)
            first_out_of_sync = isr is not None and kept[0] not in isr[partition]
            assert after[0] == kept[0] or first_out_of_sync
        else:  # only additions, the kept replicas in their order, a drained one's place refilled
            assert is_subsequence(kept, after)
            assert len(set(after) - set(before)) == replication_factor - len(kept)
            if before[0] not in drain:
                assert after[0] == before[0]
            if not drain:
                assert after[: len(before)] == before


@PROPERTIES
@given(clusters())
def test_a_decrease_removes_out_of_sync_replicas_first_and_never_the_last_in_sync_one(case):
    _, current, drain, topic, replication_factor, isr = case
    placed = place(case)
    if placed is None or isr is None:
        return
    for partition, after in placed.items():
        kept = [b for b in current[topic][partition] if b not in drain]
        in_sync = set(isr[partition])
        if len(kept) > replication_factor:
            if in_sync & set(kept):
                assert in_sync & set(after)
            if in_sync & (set(kept) - set(after)):  # an in-sync replica went: no other out-of-sync one stays
                assert not set(after[1:]) - in_sync


@PROPERTIES
@given(clusters(racks="all", everyone_up=True, isr=False))
def test_replicas_spread_over_racks_as_far_as_the_kept_replicas_allow(case):
    cluster, current, drain, topic, replication_factor, _ = case
    placed = place(case)
    if placed is None:
        return
    rack = {b.node_id: b.rack for b in cluster}

    def widest(replicas) -> int:  # the most replicas of the partition in one rack
        return max(Counter(rack[b] for b in replicas).values())

    candidates = sorted(eligible(cluster, drain))
    for partition, after in placed.items():
        kept = [b for b in current[topic][partition] if b not in drain]
        if len(kept) >= replication_factor:  # the first stays; any other choice of the rest
            best = min(widest([kept[0], *rest]) for rest in itertools.combinations(kept[1:], replication_factor - 1))
        else:
            free = [b for b in candidates if b not in kept]
            best = min(widest(kept + list(new)) for new in itertools.combinations(free, replication_factor - len(kept)))
        assert widest(after) == best, (partition, kept, after)
        new = set(after) - set(kept)
        crowded = {rack[b] for b in new if Counter(rack[x] for x in after)[rack[b]] > 1}
        if crowded:  # a new replica shares its rack only when every eligible rack holds one
            assert {rack[b] for b in candidates} <= {rack[b] for b in after}


@PROPERTIES
@given(clusters(), st.randoms(use_true_random=False))
def test_the_same_input_in_any_order_gives_the_same_placement(case, rnd: random.Random):
    cluster, current, drain, topic, replication_factor, isr = case

    def shuffled(items):
        items = list(items)
        rnd.shuffle(items)
        return items

    again = (
        shuffled(cluster),
        {t: {p: list(r) for p, r in shuffled(parts.items())} for t, parts in shuffled(current.items())},
        shuffled(drain),
        topic,
        replication_factor,
        None if isr is None else {p: shuffled(r) for p, r in shuffled(isr.items())},
    )
    first = place(case)
    assert place(case) == first
    assert place(again) == first


@st.composite
def balanced_clusters(draw):
    """Topics created the way Kafka assigns replicas (consecutive brokers from a rotating start), each
    with a multiple of the broker count of partitions, so every broker holds as many replicas of
    each; one topic grows."""
    n = draw(st.integers(1, 8))
    ids = list(range(1, n + 1))
    current: dict[str, dict[int, list[int]]] = {}
    for t in range(draw(st.integers(1, 3))):
        factor, start = draw(st.integers(1, n)), draw(st.integers(0, n - 1))
        current[f"t{t}"] = {p: [ids[(start + p + j) % n] for j in range(factor)] for p in range(n * draw(st.integers(1, 3)))}
    topic = draw(st.sampled_from(sorted(current)))
    factor = draw(st.integers(len(current[topic][0]), n))
    return brokers(*ids), current, topic, factor


@PROPERTIES
@given(balanced_clusters())
def test_growing_a_topic_on_a_balanced_cluster_keeps_it_balanced(case):
    cluster, current, topic, replication_factor = case
    placed = dict(current, **{topic: Placement(cluster, current).place(topic, replication_factor)})
    load = loads(placed)
    assert max(load.values()) - min(load[b.node_id] for b in cluster) <= 1


@PROPERTIES
@given(clusters(racks="none", everyone_up=True, drains=False, isr=False))
def test_the_added_replicas_balance_the_cluster_as_well_as_any_placement_could(case):
    cluster, current, _, topic, replication_factor, _ = case
    placed = place(case)
    if placed is None:
        return
    ids = [b.node_id for b in cluster]
    others = loads({t: parts for t, parts in current.items() if t != topic})
    if any(len(r) > replication_factor for r in current[topic].values()):
        return  # removals: covered by the tests above
    growing = {p: r for p, r in current[topic].items() if len(r) < replication_factor}
    options = [
        [list(new) for new in itertools.combinations([b for b in ids if b not in r], replication_factor - len(r))]
        for r in growing.values()
    ]
    if sum(len(r) for r in current[topic].values()) > 12 or len(list(itertools.product(*options))) > 5000:
        return  # beyond what trying every placement can afford

    def spread(chosen):
        load = others + loads({topic: current[topic]})
        for new in chosen:
            load.update(new)
        return max(load[b] for b in ids) - min(load[b] for b in ids)

    assert spread([set(placed[p]) - set(current[topic][p]) for p in growing]) == min(
        spread(chosen) for chosen in itertools.product(*options)
    )


# -- new topics (place_new): placed by the plan when the manifests constrain them ------------------


def test_a_new_topic_keeps_its_pins_and_places_the_rest_off_drained_brokers():
    placement = Placement(brokers(1, 2, 3, 4), {"old": {0: [1, 2]}}, drain=[4])
    placed = placement.place_new("new", 3, 2, pinned={0: [2, 3]})
    assert placed[0] == [2, 3]
    assert all(len(set(r)) == 2 and 4 not in r for r in placed.values())


def test_a_new_topic_spreads_over_racks_and_its_leaders_over_brokers():
    placement = Placement(brokers(1, 2, 3, 4, racks="aabb"), {})
    placed = placement.place_new("new", 4, 2)
    assert all(len({"aabb"[b - 1] for b in r}) == 2 for r in placed.values())
    assert sorted(r[0] for r in placed.values()) == [1, 2, 3, 4]


def test_a_new_topic_pinned_to_a_drained_broker_is_an_error_naming_it():
    placement = Placement(brokers(1, 2, 3), {}, drain=[3])
    with pytest.raises(PlacementError, match=r"partition 0: replica_assignment \[3, 1\] names broker 3, which is being drained"):
        placement.place_new("new", 2, 2, pinned={0: [3, 1]})
    with pytest.raises(PlacementError, match="is on the cluster already"):
        Placement(brokers(1, 2), {"old": {0: [1]}}).place_new("old", 1, 1)
