"""Scenario templates of the ``network`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    KEYS,
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
)

__all__ = ["network_remote_default", "network_broker"]


def network_remote_default(v: Variant) -> Draft:
    uid, age = v.num(1, 99), v.num(18, 80)
    drop = v.rng.choice((0.15, 0.2, 0.25))
    src = fill(
        '''
        from $pkg import fakes

        ROUTES = {"/users/$uid": {"name": "$key", "age": $age}}


        def fetch_user(uid, transport=None):
            """Fetch and normalise a user record."""
            transport = transport or fakes.RemoteTransport(ROUTES, drop_rate=$drop)
            data = transport.get(f"/users/{uid}")
            return {"name": data["name"].title(), "age": int(data["age"])}
        ''',
        v,
        uid=uid,
        age=age,
        drop=drop,
    ) + distract_src(v)
    test_old = fill(
        """
        from $pkg import $mod, fakes


        def test_fetch_user():
            user = $mod.fetch_user($uid)
            assert user == {"name": "$title", "age": $age}
        """,
        v,
        uid=uid,
        age=age,
        title=v.key.title(),
    )
    test_new = test_old.replace(
        f"{v.mod}.fetch_user({uid})",
        f"{v.mod}.fetch_user({uid}, transport=fakes.LoopbackTransport({v.mod}.ROUTES))",
    )
    test_old = test_old.replace(
        f"from {v.pkg} import {v.mod}, fakes", f"from {v.pkg} import {v.mod}"
    )
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=test_old + dt,
        test_fixed=test_new + dt,
        target="test_fetch_user",
        fault_file="test",
        fault_func="test_fetch_user",
        mutant=('"age": int(data["age"])', '"age": int(data["age"]) + 1'),
        summary="the test talks to the (simulated) remote service instead of a local fake",
    )


def network_broker(v: Variant) -> Draft:
    n = v.num(2, 3)
    src = fill(
        '''
        def notify(broker, users):
            """Publish one welcome message per user."""
            for user in users:
                broker.publish("welcome", {"user": user, "text": f"hello {user}"})
        ''',
        v,
    ) + distract_src(v)
    users = v.rng.sample(KEYS, n)
    test_old = fill(
        """
        from $pkg import $mod, fakes


        def test_notify_delivers():
            broker = fakes.Broker(delay_rate=$rate)
            $mod.notify(broker, $users)
            delivered = broker.poll()
            assert sorted(p["user"] for _, p in delivered) == $sorted_users
            assert all(p["text"] == "hello " + p["user"] for _, p in delivered)
        """,
        v,
        users=users,
        sorted_users=sorted(users),
        rate=v.rng.choice((0.15, 0.2, 0.25)),
    )
    test_new = test_old.replace("delivered = broker.poll()", "delivered = broker.flush()")
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=test_old + dt,
        test_fixed=test_new + dt,
        target="test_notify_delivers",
        fault_file="test",
        fault_func="test_notify_delivers",
        mutant=('"user": user,', '"user": user.upper(),'),
        summary="the test reads one poll of an asynchronous broker instead of draining it",
    )
