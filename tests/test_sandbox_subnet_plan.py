"""Subnet planning: /28s from a private pool, never overlapping a docker network or each other."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from sandbox.subnet_plan import SubnetPlanner, subnets_in_use


def test_candidates_are_session_sized_inside_the_pool_and_clear_of_taken_networks():
    planner = SubnetPlanner("10.213.0.0/24")
    taken = [IPv4Network("10.213.0.0/25"), IPv4Network("172.17.0.0/16")]
    got = [next(planner.reserve(taken)) for _ in range(8)]
    assert all(s.prefixlen == 28 and s.subnet_of(planner.pool) for s in got)
    assert not any(s.overlaps(taken[0]) for s in got)
    assert len(set(got)) == 8  # the upper /25 holds exactly eight /28s, each reserved once


def test_exhausted_pool_says_which_pool():
    planner = SubnetPlanner("10.213.0.0/27")
    first, second = next(planner.reserve([])), next(planner.reserve([]))
    assert first != second
    with pytest.raises(RuntimeError, match=r"10\.213\.0\.0/27 has no free /28"):
        next(planner.reserve([]))
    planner.release(first)
    assert next(planner.reserve([])) == first


def test_pool_must_be_a_private_ipv4_network(monkeypatch):
    with pytest.raises(ValueError, match="not a private range"):
        SubnetPlanner("8.8.0.0/16")
    with pytest.raises(ValueError, match="'nonsense' is not an IPv4 network"):
        SubnetPlanner("nonsense")
    monkeypatch.setenv("APEX_VOICE_SANDBOX_SUBNET_POOL", "192.168.200.0/24")
    assert SubnetPlanner().pool == IPv4Network("192.168.200.0/24")


def test_subnets_in_use_reads_the_engine_listing():
    listing = [
        {"Name": "bridge", "IPAM": {"Config": [{"Subnet": "172.17.0.0/16", "Gateway": "172.17.0.1"}]}},
        {"Name": "host", "IPAM": {"Config": []}},
        {"Name": "v6", "IPAM": {"Config": [{"Subnet": "fd00::/64"}]}},
        {"Name": "none", "IPAM": None},
    ]
    assert subnets_in_use(listing) == [IPv4Network("172.17.0.0/16")]
