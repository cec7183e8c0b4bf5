"""Scenario templates of the root-cause taxonomy.

Each template is a function ``(v: Variant) -> Draft``: it renders a small package
(source under test, shared local fakes), a test file whose ``target`` test is flaky
under the chaos schedule, the reference fix (full fixed contents), a mutant of the
fixed source (the power check: the repaired test must fail on it) and, where it
for some templates a *partial* fix. A partial fix is legitimate: it removes one of two
independent root causes (one of two polluters, caches, shared attributes or clock
uses), so the pass rate under the chaos schedule rises but stays below 1.0, and it
adds nothing an anti-hack scan flags (waiting longer is a hack, never a partial fix).
"""

from __future__ import annotations

import calendar
import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from string import Template

__all__ = ["CATEGORIES", "TEMPLATES", "Draft", "Variant"]

CATEGORIES: tuple[str, ...] = (
    "async_wait",
    "concurrency",
    "test_order_dependency",
    "non_idempotent",
    "resource_leak",
    "shared_state",
    "network",
    "platform_dependency",
    "nondeterminism",
    "import_side_effect",
    "module_cache_pollution",
    "fixture_scope_leak",
    "mock_residue",
)

_PKGS = ("app", "svc", "shop", "core", "backend", "service", "lib", "engine")
_MODS = ("ledger", "billing", "orders", "catalog", "metrics", "sessions", "profiles", "routing")
_NOUNS = ("invoice", "report", "ticket", "order", "account", "payment", "shipment", "profile")
_KEYS = ("alpha", "bravo", "delta", "kilo", "lima", "oscar", "sierra", "tango")


@dataclass
class Variant:
    """The parameters one scenario is rendered from (all drawn from ``rng``)."""

    rng: random.Random
    distractors: int
    pkg: str = ""
    mod: str = ""
    noun: str = ""
    key: str = ""
    #: The code under test and its test file (derived from ``pkg`` and ``mod``).
    src: str = field(init=False, default="")
    test_path: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.pkg = self.rng.choice(_PKGS)
        self.mod = self.rng.choice(_MODS)
        self.noun = self.rng.choice(_NOUNS)
        self.key = self.rng.choice(_KEYS)
        self.src, self.test_path = f"{self.pkg}/{self.mod}.py", f"tests/test_{self.mod}.py"

    def num(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


@dataclass
class Draft:
    """A rendered scenario before validation."""

    source: str
    source_fixed: str
    test: str
    test_fixed: str
    target: str
    #: ``"src"`` or ``"test"`` plus the function holding the root cause.
    fault_file: str
    fault_func: str
    mutant: tuple[str, str]
    summary: str
    partial_source: str | None = None
    partial_test: str | None = None
    extra_files: dict[str, str] = field(default_factory=dict)


def _t(text: str, v: Variant, **kw: object) -> str:
    base = {"pkg": v.pkg, "mod": v.mod, "noun": v.noun, "key": v.key}
    base.update({k: str(val) for k, val in kw.items()})
    return Template(textwrap.dedent(text).lstrip("\n")).substitute(base)


def _distract_src(v: Variant) -> str:
    """Distractor helpers in the source (and their tests, from :func:`_distract_tests`)."""
    parts = []
    for i in range(v.distractors):
        parts.append(
            _t(
                '''

                def ${noun}_label_$i(value):
                    """Format a ${noun} label (unrelated to the flakiness)."""
                    return "$key-$i:" + str(value).strip().lower()
                ''',
                v,
                i=i,
            )
        )
    return "".join(parts)


def _distract_tests(v: Variant) -> str:
    parts = []
    for i in range(v.distractors):
        parts.append(
            _t(
                """

                def test_${noun}_label_$i():
                    assert $mod.${noun}_label_$i("  X ") == "$key-$i:x"
                """,
                v,
                i=i,
            )
        )
    return "".join(parts)


def _swap(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"template bug: {old!r} occurs {text.count(old)} times")
    return text.replace(old, new)


# --------------------------------------------------------------------- async_wait
def async_unawaited(v: Variant) -> Draft:
    mult, polls, ticks = v.num(2, 9), v.num(2, 3), v.num(3, 5)
    src = _t(
        """
        import asyncio

        from $pkg import fakes


        async def load_$noun(key):
            await fakes.io_delay($ticks)
            return {"key": key, "size": len(key) * $mult}


        async def collect_$noun(key, sink):
            sink.append(await load_$noun(key))
        """,
        v,
        ticks=ticks,
        mult=mult,
    ) + _distract_src(v)
    whole = _t(
        """
        import asyncio

        from $pkg import $mod, fakes


        def test_collect_$noun():
            async def scenario():
                sink = []
                BODY
                return sink

            assert asyncio.run(scenario()) == [{"key": "$key", "size": $size}]
        """,
        v,
        size=len(v.key) * mult,
    ) + _distract_tests(v)
    flaky_call = f'asyncio.ensure_future({v.mod}.collect_{v.noun}("{v.key}", sink))\n'
    flaky = whole.replace("BODY\n", flaky_call + f"        await fakes.settle({polls})\n")
    fixed = whole.replace("BODY\n", f'await {v.mod}.collect_{v.noun}("{v.key}", sink)\n')
    return Draft(
        source=src,
        source_fixed=src,
        test=flaky,
        test_fixed=fixed,
        target=f"test_collect_{v.noun}",
        fault_file="test",
        fault_func=f"test_collect_{v.noun}",
        mutant=(f"len(key) * {mult}", f"len(key) * {mult} + 1"),
        summary="the test checks a fire-and-forget task after a fixed number of "
        "scheduler turns instead of awaiting it",
    )


def async_fire_and_forget(v: Variant) -> Draft:
    ticks, polls = v.num(3, 5), v.num(2, 3)
    src = _t(
        '''
        import asyncio

        from $pkg import fakes


        async def _fill(cache, key):
            await fakes.io_delay($ticks)
            cache[key] = key.upper()


        async def refresh(cache, key):
            """Refresh ``cache[key]`` from the backend."""
            asyncio.ensure_future(_fill(cache, key))
        ''',
        v,
        ticks=ticks,
    ) + _distract_src(v)
    fixed = _swap(
        src, "    asyncio.ensure_future(_fill(cache, key))", "    await _fill(cache, key)"
    )
    test = _t(
        """
        import asyncio

        from $pkg import $mod, fakes


        def test_refresh_fills_cache():
            async def scenario():
                cache = {}
                await $mod.refresh(cache, "$key")
                await fakes.settle($polls)
                return cache

            assert asyncio.run(scenario()) == {"$key": "$upper"}
        """,
        v,
        polls=polls,
        upper=v.key.upper(),
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_refresh_fills_cache",
        fault_file="src",
        fault_func="refresh",
        mutant=("cache[key] = key.upper()", "cache[key] = key.lower()"),
        summary="refresh() schedules the fill as a task and returns before it ran",
    )


# -------------------------------------------------------------------- concurrency
def concurrency_lost_update(v: Variant) -> Draft:
    n, amount = v.num(3, 4), v.num(2, 9)
    prob = v.rng.choice((0.2, 0.25, 0.3))
    src = _t(
        """
        import asyncio

        from $pkg import fakes


        class Store:
            def __init__(self):
                self.data = {}

            async def read(self, key):
                return self.data.get(key, 0)

            async def write(self, key, value):
                self.data[key] = value


        class ${Noun}Account:
            def __init__(self, store):
                self.store = store
                self._lock = asyncio.Lock()

            async def deposit(self, amount):
                balance = await self.store.read("$key")
                await fakes.maybe_delay($prob)
                await self.store.write("$key", balance + amount)
        """,
        v,
        Noun=v.noun.capitalize(),
        prob=prob,
    ) + _distract_src(v)
    fixed = _swap(
        src,
        """        balance = await self.store.read("$key")
        await fakes.maybe_delay($prob)
        await self.store.write("$key", balance + amount)
""".replace("$key", v.key).replace("$prob", str(prob)),
        f'''        async with self._lock:
            balance = await self.store.read("{v.key}")
            await fakes.maybe_delay({prob})
            await self.store.write("{v.key}", balance + amount)
''',
    )
    test = _t(
        """
        import asyncio

        from $pkg import $mod


        def test_concurrent_deposits():
            async def scenario():
                store = $mod.Store()
                account = $mod.${Noun}Account(store)
                await asyncio.gather(*(account.deposit($amount) for _ in range($n)))
                return store.data["$key"]

            assert asyncio.run(scenario()) == $total
        """,
        v,
        Noun=v.noun.capitalize(),
        amount=amount,
        n=n,
        total=amount * n,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_concurrent_deposits",
        fault_file="src",
        fault_func="deposit",
        mutant=("balance + amount)\n", "balance + amount + 1)\n"),
        summary="read-modify-write across an await point without the lock: lost updates",
    )


def concurrency_worker_pool(v: Variant) -> Draft:
    cap, workers, jobs = v.num(3, 4), 2, v.num(5, 6)
    prob = v.rng.choice((0.3, 0.4))
    factor = v.num(2, 5)
    src = _t(
        '''
        import asyncio

        from $pkg import fakes


        class WorkerPool:
            """Process ${noun} jobs with ``workers`` consumers and a bounded queue."""

            def __init__(self, capacity=$cap, workers=$workers):
                self.queue = asyncio.Queue(maxsize=capacity)
                self.workers = workers
                self.done = []

            async def submit(self, job):
                await fakes.maybe_delay($prob)
                self.queue.put_nowait(job)

            async def _worker(self):
                while True:
                    job = await self.queue.get()
                    await fakes.maybe_delay(0.5)
                    self.done.append(job * $factor)
                    self.queue.task_done()

            async def run(self, jobs):
                consumers = [asyncio.ensure_future(self._worker()) for _ in range(self.workers)]
                await asyncio.gather(*(self.submit(job) for job in jobs))
                await self.queue.join()
                for consumer in consumers:
                    consumer.cancel()
                return sorted(self.done)
        ''',
        v,
        cap=cap,
        workers=workers,
        prob=prob,
        factor=factor,
    ) + _distract_src(v)
    fixed = _swap(src, "self.queue.put_nowait(job)", "await self.queue.put(job)")
    test = _t(
        """
        import asyncio

        from $pkg import $mod


        def test_pool_under_load():
            pool = $mod.WorkerPool()
            assert asyncio.run(pool.run(list(range($jobs)))) == [j * $factor for j in range($jobs)]
        """,
        v,
        jobs=jobs,
        factor=factor,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_pool_under_load",
        fault_file="src",
        fault_func="submit",
        mutant=(f"job * {factor})", f"job * {factor} + 1)"),
        summary="concurrent submissions use put_nowait on a tight queue: QueueFull under load",
    )


# --------------------------------------------------------- test_order_dependency
def order_polluter(v: Variant) -> Draft:
    cents = v.num(101, 9999)
    cur, other = v.rng.sample(("EUR", "USD", "GBP", "JPY", "CHF"), 2)
    sep = v.rng.choice(("", "_", "/"))
    src = _t(
        """
        _SETTINGS = {"currency": "$cur", "sep": " "}


        def configure(**settings):
            _SETTINGS.update(settings)


        def current_currency():
            return _SETTINGS["currency"]


        def current_sep():
            return _SETTINGS["sep"]


        def format_price(cents):
            return f"{cents / 100:.2f}{_SETTINGS['sep']}{_SETTINGS['currency']}"
        """,
        v,
        cur=cur,
    ) + _distract_src(v)
    currency_old = _t(
        """
        def test_configure_currency():
            $mod.configure(currency="$other")
            assert $mod.format_price(100) == "1.00 $other"


        """,
        v,
        other=other,
    )
    currency_new = _t(
        """
        def test_configure_currency():
            previous = $mod.current_currency()
            $mod.configure(currency="$other")
            try:
                assert $mod.format_price(100) == "1.00 $other"
            finally:
                $mod.configure(currency=previous)


        """,
        v,
        other=other,
    )
    sep_old = _t(
        """
        def test_configure_separator():
            $mod.configure(sep="$sep")
            assert $mod.format_price(250).startswith("2.50$sep")
        """,
        v,
        sep=sep,
    )
    sep_new = _t(
        """
        def test_configure_separator():
            previous = $mod.current_sep()
            $mod.configure(sep="$sep")
            try:
                assert $mod.format_price(250).startswith("2.50$sep")
            finally:
                $mod.configure(sep=previous)
        """,
        v,
        sep=sep,
    )
    head = _t(
        """
        from $pkg import $mod


        def test_format_price():
            assert $mod.format_price($cents) == "$txt $cur"


        """,
        v,
        cents=cents,
        txt=f"{cents / 100:.2f}",
        cur=cur,
    )
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=head + currency_old + sep_old + dt,
        test_fixed=head + currency_new + sep_new + dt,
        partial_test=head + currency_new + sep_old + dt,
        target="test_format_price",
        fault_file="test",
        fault_func="test_configure_currency",
        mutant=("cents / 100:.2f", "cents / 10:.2f"),
        summary="two other tests change module-level settings and never restore them",
    )


def order_brittle(v: Variant) -> Draft:
    rows = v.num(2, 5)
    src = _t(
        """
        _TABLES = {}


        def create_table(name):
            _TABLES[name] = []


        def insert(name, row):
            _TABLES[name].append(row)
            return len(_TABLES[name])


        def count(name):
            return len(_TABLES[name])
        """,
        v,
    ) + _distract_src(v)
    setter = _t(
        """
        from $pkg import $mod


        def test_create_table():
            $mod.create_table("${noun}s")
            assert $mod.count("${noun}s") == 0


        """,
        v,
    )
    target_old = _t(
        """
        def test_insert_rows():
            for i in range($rows):
                $mod.insert("${noun}s", {"id": i})
            assert $mod.count("${noun}s") == $rows
        """,
        v,
        rows=rows,
    )
    target_new = _t(
        """
        def test_insert_rows():
            $mod.create_table("${noun}s")
            for i in range($rows):
                $mod.insert("${noun}s", {"id": i})
            assert $mod.count("${noun}s") == $rows
        """,
        v,
        rows=rows,
    )
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=setter + target_old + dt,
        test_fixed=setter + target_new + dt,
        target="test_insert_rows",
        fault_file="test",
        fault_func="test_insert_rows",
        mutant=(
            "def count(name):\n    return len(_TABLES[name])",
            "def count(name):\n    return len(_TABLES[name]) + 1",
        ),
        summary="the test relies on a table another test creates (brittle: needs a state-setter)",
    )


# ---------------------------------------------------------------- non_idempotent
def nonidem_register(v: Variant) -> Draft:
    names = v.rng.sample(_KEYS, 2)
    src = _t(
        """
        class DuplicateHandler(ValueError):
            pass


        _HANDLERS = []


        def register(name):
            if name in _HANDLERS:
                raise DuplicateHandler(name)
            _HANDLERS.append(name)


        def handlers():
            return list(_HANDLERS)


        def reset():
            _HANDLERS.clear()
        """,
        v,
    ) + _distract_src(v)
    body_old = _t(
        """
        from $pkg import $mod


        def test_register_handlers():
            $mod.register("$a")
            $mod.register("$b")
            assert $mod.handlers() == ["$a", "$b"]
        """,
        v,
        a=names[0],
        b=names[1],
    )
    body_new = body_old.replace(
        "def test_register_handlers():\n", f"def test_register_handlers():\n    {v.mod}.reset()\n"
    )
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=body_old + dt,
        test_fixed=body_new + dt,
        target="test_register_handlers",
        fault_file="test",
        fault_func="test_register_handlers",
        mutant=("    _HANDLERS.append(name)\n", "    _HANDLERS.insert(0, name)\n"),
        summary="the test registers into a process-wide registry: a second run in the "
        "same process fails",
    )


def nonidem_init(v: Variant) -> Draft:
    k = v.num(2, 4)
    src = _t(
        '''
        _PIPELINE = []


        def init():
            """Install the default ${noun} stages."""
            for i in range($k):
                _PIPELINE.append(f"stage-{i}")


        def stages():
            return list(_PIPELINE)
        ''',
        v,
        k=k,
    ) + _distract_src(v)
    fixed = _swap(
        src,
        "    for i in range(",
        "    _PIPELINE.clear()\n    for i in range(",
    )
    test = _t(
        """
        from $pkg import $mod


        def test_init_installs_stages():
            $mod.init()
            assert $mod.stages() == [f"stage-{i}" for i in range($k)]
        """,
        v,
        k=k,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_init_installs_stages",
        fault_file="src",
        fault_func="init",
        mutant=('f"stage-{i}"', 'f"stage-{i + 1}"'),
        summary="init() is not idempotent: calling it twice duplicates the stages",
    )


# ----------------------------------------------------------------- resource_leak
def leak_pool(v: Variant) -> Draft:
    size = v.num(2, 4)
    calls = size - 1 if size > 2 else 1
    mult = v.num(2, 7)
    src = _t(
        """
        from $pkg import fakes

        POOL = fakes.ResourcePool($size)


        def total_for(ids):
            handle = POOL.acquire()
            total = sum(i * $mult for i in ids)
            return total
        """,
        v,
        size=size,
        mult=mult,
    ) + _distract_src(v)
    fixed = _swap(
        src,
        f"""    handle = POOL.acquire()
    total = sum(i * {mult} for i in ids)
    return total
""",
        f"""    handle = POOL.acquire()
    try:
        return sum(i * {mult} for i in ids)
    finally:
        POOL.release(handle)
""",
    )
    test = _t(
        """
        from $pkg import $mod


        def test_totals():
            for n in range(1, $calls + 1):
                assert $mod.total_for(range(n)) == sum(range(n)) * $mult


        def test_single_total():
            assert $mod.total_for([1, 2]) == $three
        """,
        v,
        calls=calls,
        mult=mult,
        three=3 * mult,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_totals",
        fault_file="src",
        fault_func="total_for",
        mutant=(f"i * {mult} for i in ids", f"i * {mult} + 1 for i in ids"),
        summary="total_for() acquires a pooled handle and never releases it",
    )


# ------------------------------------------------------------------ shared_state
def shared_mutable_default(v: Variant) -> Draft:
    a, b = v.rng.sample(_KEYS, 2)
    src = _t(
        '''
        def record(event, log=[]):
            """Append ``event`` to ``log`` and return the log."""
            log.append(event)
            return log
        ''',
        v,
    ) + _distract_src(v)
    fixed = _swap(
        src,
        "def record(event, log=[]):",
        "def record(event, log=None):",
    )
    fixed = _swap(
        fixed,
        "    log.append(event)\n",
        "    log = [] if log is None else log\n    log.append(event)\n",
    )
    test = _t(
        """
        from $pkg import $mod


        def test_record_single():
            assert $mod.record("$a") == ["$a"]


        def test_record_into_log():
            log = ["$b"]
            assert $mod.record("$a", log) == ["$b", "$a"]
            assert $mod.record("$b") != []
        """,
        v,
        a=a,
        b=b,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_record_single",
        fault_file="src",
        fault_func="record",
        mutant=("    log.append(event)\n", "    log.append(event.upper())\n"),
        summary="a mutable default argument shares one list across calls",
    )


def shared_class_attr(v: Variant) -> Draft:
    price = v.num(2, 30)
    off = v.num(1, 3)
    noun = v.noun.capitalize()
    src = _t(
        """
        class ${Noun}Cart:
            items = []
            discounts = []

            def add(self, name, price):
                self.items.append((name, price))

            def discount(self, amount):
                self.discounts.append(amount)

            def total(self):
                return sum(price for _, price in self.items) - sum(self.discounts)
        """,
        v,
        Noun=noun,
    ) + _distract_src(v)
    attrs = "    items = []\n    discounts = []\n"
    fixed = _swap(
        src,
        attrs,
        "    def __init__(self):\n        self.items = []\n        self.discounts = []\n",
    )
    partial = _swap(
        src, attrs, "    discounts = []\n\n    def __init__(self):\n        self.items = []\n"
    )
    test = _t(
        """
        from $pkg import $mod


        def test_cart_total():
            cart = $mod.${Noun}Cart()
            cart.add("$key", $price)
            assert cart.total() == $price


        def test_cart_two_items():
            cart = $mod.${Noun}Cart()
            cart.add("a", 1)
            cart.add("b", 2)
            assert cart.total() >= 3


        def test_cart_discount():
            cart = $mod.${Noun}Cart()
            cart.add("c", 10)
            cart.discount($off)
            assert cart.total() < sum(p for _, p in cart.items)
        """,
        v,
        Noun=noun,
        price=price,
        off=off,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        partial_source=partial,
        target="test_cart_total",
        fault_file="src",
        fault_func=f"{noun}Cart",
        mutant=(
            "sum(price for _, price in self.items)",
            "sum(price for _, price in self.items) + 1",
        ),
        summary="items and discounts are class attributes shared by every cart",
    )


# ----------------------------------------------------------------------- network
def network_remote_default(v: Variant) -> Draft:
    uid, age = v.num(1, 99), v.num(18, 80)
    drop = v.rng.choice((0.15, 0.2, 0.25))
    src = _t(
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
    ) + _distract_src(v)
    test_old = _t(
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
    dt = _distract_tests(v)
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
    src = _t(
        '''
        def notify(broker, users):
            """Publish one welcome message per user."""
            for user in users:
                broker.publish("welcome", {"user": user, "text": f"hello {user}"})
        ''',
        v,
    ) + _distract_src(v)
    users = v.rng.sample(_KEYS, n)
    test_old = _t(
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
    dt = _distract_tests(v)
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


# ----------------------------------------------------------- platform_dependency
def platform_tz(v: Variant) -> Draft:
    # UTC timestamps near a day and a month boundary, on opposite sides of midnight:
    # local-time conversion moves the day in some time zones, the month in others.
    day = v.num(2, 27)
    hour = v.rng.choice((1, 2, 22, 23))
    ts = 1704067200 + (day - 1) * 86400 + hour * 3600  # 2024-01-<day> <hour>:00 UTC
    month = v.num(3, 12)
    first = calendar.timegm((2024, month, 1, 0, 0, 0))
    # Day late in UTC (east zones move it forward) -> month ts just after midnight UTC
    # (west zones move it back), and vice versa.
    month_ts = first + 1800 if hour >= 22 else first - 1800
    month_txt = f"2024-{month:02d}" if hour >= 22 else f"2024-{month - 1:02d}"
    src = _t(
        '''
        from datetime import datetime, timezone


        def day_key(ts):
            """The UTC day a ${noun} timestamp belongs to."""
            return datetime.fromtimestamp(ts).strftime("%Y-%m-%d")


        def month_key(ts):
            """The UTC month a ${noun} timestamp is billed in."""
            return datetime.fromtimestamp(ts).strftime("%Y-%m")
        ''',
        v,
    ) + _distract_src(v)
    day_old = 'datetime.fromtimestamp(ts).strftime("%Y-%m-%d")'
    month_old = 'datetime.fromtimestamp(ts).strftime("%Y-%m")'
    utc = "datetime.fromtimestamp(ts, tz=timezone.utc)"
    partial = _swap(src, day_old, utc + '.strftime("%Y-%m-%d")')
    fixed = _swap(partial, month_old, utc + '.strftime("%Y-%m")')
    test = _t(
        """
        from $pkg import $mod


        def test_day_key():
            assert $mod.day_key($ts) == "2024-01-$dd"
            assert $mod.month_key($month_ts) == "$month_txt"
        """,
        v,
        ts=ts,
        dd=f"{day:02d}",
        month_ts=month_ts,
        month_txt=month_txt,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        partial_source=partial,
        target="test_day_key",
        fault_file="src",
        fault_func="day_key",
        mutant=('"%Y-%m-%d"', '"%Y-%d-%m"'),
        summary="day_key() and month_key() convert with the process time zone instead of UTC",
    )


def platform_locale(v: Variant) -> Draft:
    cents = v.num(1001, 99999)
    src = _t(
        '''
        import os


        def _decimal_point():
            lang = os.environ.get("LC_ALL") or os.environ.get("LANG", "")
            return "," if lang[:2] in ("de", "fr", "pt") else "."


        def export_amount(cents):
            """Render an amount for the machine-readable CSV export."""
            whole, frac = divmod(cents, 100)
            return f"{whole}{_decimal_point()}{frac:02d}"
        ''',
        v,
    ) + _distract_src(v)
    fixed = _swap(
        src, 'return f"{whole}{_decimal_point()}{frac:02d}"', 'return f"{whole}.{frac:02d}"'
    )
    test = _t(
        """
        from $pkg import $mod


        def test_export_amount():
            assert $mod.export_amount($cents) == "$txt"
        """,
        v,
        cents=cents,
        txt=f"{cents // 100}.{cents % 100:02d}",
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_export_amount",
        fault_file="src",
        fault_func="export_amount",
        mutant=("divmod(cents, 100)", "divmod(cents, 10)"),
        summary="the machine-readable export follows the process locale's decimal point",
    )


def platform_clock(v: Variant) -> Draft:
    start, end = v.rng.choice(((9, 17), (8, 18), (10, 16)))
    hour = v.num(start + 1, end - 2)
    src = _t(
        '''
        import time


        def is_open(now=None):
            """Whether the ${noun} desk is open (UTC hours $start-$end)."""
            now = time.time() if now is None else now
            hour = int(now // 3600) % 24
            return $start <= hour < $end
        ''',
        v,
        start=start,
        end=end,
    ) + _distract_src(v)
    ts = 1709683200 + hour * 3600 + 600  # 2024-03-06 <hour>:10 UTC
    test_old = _t(
        """
        from $pkg import $mod


        def test_desk_open():
            assert $mod.is_open()
            assert not $mod.is_open($night)
        """,
        v,
        night=1709683200 + 3 * 3600,
    )
    test_new = test_old.replace(f"{v.mod}.is_open()\n", f"{v.mod}.is_open({ts})\n")
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=test_old + dt,
        test_fixed=test_new + dt,
        target="test_desk_open",
        fault_file="test",
        fault_func="test_desk_open",
        mutant=(f"return {start} <= hour < {end}", "return True"),
        summary="the test depends on the wall clock instead of passing a fixed time",
    )


# ---------------------------------------------------------------- nondeterminism
def nondet_tiebreak(v: Variant) -> Draft:
    names = v.rng.sample(_KEYS, v.num(2, 3))
    score = v.num(50, 99)
    src = _t(
        '''
        import random


        def leader(scores):
            """The name with the highest score (ties: alphabetical)."""
            best = max(scores.values())
            tied = [name for name, value in scores.items() if value == best]
            return random.choice(tied)
        ''',
        v,
    ) + _distract_src(v)
    fixed = _swap(src, "return random.choice(tied)", "return min(tied)")
    scores = {n: score for n in names}
    scores["zulu"] = score - 1
    test = _t(
        """
        from $pkg import $mod


        def test_leader_tiebreak():
            assert $mod.leader($scores) == "$first"
        """,
        v,
        scores=scores,
        first=min(names),
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_leader_tiebreak",
        fault_file="src",
        fault_func="leader",
        mutant=("return min(tied)", "return max(tied)"),
        summary="ties are broken with unseeded randomness",
    )


def nondet_sample(v: Variant) -> Draft:
    k = v.num(2, 3)
    src = _t(
        '''
        import random


        def batches(items, size):
            """Split ``items`` into batches of ``size`` (order kept)."""
            items = list(items)
            random.shuffle(items)
            return [items[i : i + size] for i in range(0, len(items), size)]
        ''',
        v,
    ) + _distract_src(v)
    fixed = _swap(src, "    random.shuffle(items)\n", "")
    test = _t(
        """
        from $pkg import $mod


        def test_batches_first():
            assert $mod.batches(range($n), $k)[0] == list(range($k))
        """,
        v,
        n=k,
        k=k,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_batches_first",
        fault_file="src",
        fault_func="batches",
        mutant=("range(0, len(items), size)", "range(1, len(items), size)"),
        summary="batches() shuffles its input with the unseeded global RNG",
    )


# ------------------------------------------------------------ import_side_effect
def import_salt(v: Variant) -> Draft:
    shards = 2
    src = _t(
        '''
        import random
        import zlib

        _SALT = random.getrandbits(16)


        def shard_for(key, shards=$shards):
            """Stable shard of ``key`` (must not change across restarts)."""
            return (zlib.crc32(key.encode()) + _SALT) % shards
        ''',
        v,
        shards=shards,
    ) + _distract_src(v)
    fixed = _swap(src, "_SALT = random.getrandbits(16)", "_SALT = 0")
    expected = (__import__("zlib").crc32(v.key.encode())) % shards
    test = _t(
        """
        import importlib

        from $pkg import $mod


        def test_shard_stable_across_restart():
            before = $mod.shard_for("$key")
            importlib.reload($mod)
            assert $mod.shard_for("$key") == before == $expected
        """,
        v,
        expected=expected,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_shard_stable_across_restart",
        fault_file="src",
        fault_func="<module>",
        mutant=("+ _SALT) % shards", "+ _SALT + 1) % shards"),
        summary="a random salt drawn at import time makes sharding change across restarts",
    )


# -------------------------------------------------------- module_cache_pollution
def cache_lru(v: Variant) -> Draft:
    rate, other = v.rng.sample((5, 7, 10, 12, 15, 20), 2)
    fee, other_fee = v.rng.sample((1, 2, 3, 4), 2)
    amount = v.num(10, 90) * 10
    src = _t(
        """
        import functools

        _CONFIG = {"rate": $rate, "fee": $fee}


        def set_rate(rate):
            _CONFIG["rate"] = rate


        def set_fee(fee):
            _CONFIG["fee"] = fee


        def get_rate():
            return _CONFIG["rate"]


        def get_fee():
            return _CONFIG["fee"]


        @functools.lru_cache(maxsize=None)
        def tax_for(amount):
            return amount * _CONFIG["rate"] // 100


        @functools.lru_cache(maxsize=None)
        def fee_for(amount):
            return amount * _CONFIG["fee"] // 100
        """,
        v,
        rate=rate,
        fee=fee,
    ) + _distract_src(v)
    partial = _swap(
        src,
        '    _CONFIG["rate"] = rate\n',
        '    _CONFIG["rate"] = rate\n    tax_for.cache_clear()\n',
    )
    fixed = _swap(
        partial,
        '    _CONFIG["fee"] = fee\n',
        '    _CONFIG["fee"] = fee\n    fee_for.cache_clear()\n',
    )
    test = _t(
        """
        from $pkg import $mod


        def test_tax_default_rate():
            assert $mod.tax_for($amount) == $tax
            assert $mod.fee_for($amount) == $fee_amt


        def test_tax_custom_rate():
            previous = $mod.get_rate()
            $mod.set_rate($other)
            try:
                totals = [$mod.tax_for(a) for a in ($amount, $amount2)]
                assert totals[1] == $tax2
            finally:
                $mod.set_rate(previous)


        def test_fee_custom():
            previous = $mod.get_fee()
            $mod.set_fee($other_fee)
            try:
                fees = [$mod.fee_for(a) for a in ($amount, $amount3)]
                assert fees[1] == $fee3
            finally:
                $mod.set_fee(previous)
        """,
        v,
        amount=amount,
        tax=amount * rate // 100,
        fee_amt=amount * fee // 100,
        other=other,
        amount2=amount + 10,
        tax2=(amount + 10) * other // 100,
        other_fee=other_fee,
        amount3=amount + 20,
        fee3=(amount + 20) * other_fee // 100,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        partial_source=partial,
        target="test_tax_default_rate",
        fault_file="src",
        fault_func="set_rate",
        mutant=('amount * _CONFIG["rate"] // 100', 'amount * _CONFIG["rate"] // 10'),
        summary="lru_caches keep results computed under another configuration",
    )


def cache_mutable_result(v: Variant) -> Draft:
    src = _t(
        '''
        _CACHE = {}


        def get_profile(name):
            """Load (and memoise) the ${noun} profile of ``name``."""
            if name not in _CACHE:
                _CACHE[name] = {"name": name, "tags": ["new"]}
            return _CACHE[name]
        ''',
        v,
    ) + _distract_src(v)
    fixed = _swap(
        src,
        "    return _CACHE[name]\n",
        '    cached = _CACHE[name]\n    return {"name": cached["name"], "tags": list(cached["tags"])}\n',
    )
    test = _t(
        """
        from $pkg import $mod


        def test_profile_defaults():
            assert $mod.get_profile("$key") == {"name": "$key", "tags": ["new"]}


        def test_profile_tagging():
            profile = $mod.get_profile("$key")
            profile["tags"].append("vip")
            assert "vip" in profile["tags"]
        """,
        v,
    ) + _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_profile_defaults",
        fault_file="src",
        fault_func="get_profile",
        mutant=('"tags": ["new"]', '"tags": ["old"]'),
        summary="the memo cache hands out its own mutable objects; callers pollute it",
    )


# ------------------------------------------------------------ fixture_scope_leak
def fixture_module_scope(v: Variant) -> Draft:
    qty = v.num(2, 9)
    src = _t(
        """
        def restock(stock, item, n):
            stock[item] = stock.get(item, 0) + n
            return stock[item]


        def available(stock, item):
            return stock.get(item, 0)
        """,
        v,
    ) + _distract_src(v)
    test_old = _t(
        """
        import pytest

        from $pkg import $mod


        @pytest.fixture(scope="module")
        def stock():
            return {"$key": $qty}


        def test_available(stock):
            assert $mod.available(stock, "$key") == $qty


        def test_restock(stock):
            assert $mod.restock(stock, "$key", 5) == $qty5
        """,
        v,
        qty=qty,
        qty5=qty + 5,
    )
    test_new = test_old.replace('@pytest.fixture(scope="module")', "@pytest.fixture")
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=test_old + dt,
        test_fixed=test_new + dt,
        target="test_available",
        fault_file="test",
        fault_func="stock",
        mutant=("return stock.get(item, 0)\n", "return stock.get(item, 0) + 1\n"),
        summary="a module-scoped fixture hands one mutable object to every test",
    )


# ------------------------------------------------------------------ mock_residue
def mock_unstopped(v: Variant) -> Draft:
    rate = v.num(2, 9)
    src = _t(
        """
        def exchange_rate():
            return $rate


        def convert(amount):
            return amount * exchange_rate()
        """,
        v,
        rate=rate,
    ) + _distract_src(v)
    head = _t(
        """
        from unittest import mock

        from $pkg import $mod


        def test_convert():
            assert $mod.convert(10) == $ten


        """,
        v,
        ten=10 * rate,
    )
    polluter_old = _t(
        """
        def test_convert_with_mocked_rate():
            mock.patch("$pkg.$mod.exchange_rate", return_value=100).start()
            assert $mod.convert(2) == 200
        """,
        v,
    )
    polluter_new = _t(
        """
        def test_convert_with_mocked_rate():
            with mock.patch("$pkg.$mod.exchange_rate", return_value=100):
                assert $mod.convert(2) == 200
        """,
        v,
    )
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=head + polluter_old + dt,
        test_fixed=head + polluter_new + dt,
        target="test_convert",
        fault_file="test",
        fault_func="test_convert_with_mocked_rate",
        mutant=("return amount * exchange_rate()", "return amount + exchange_rate()"),
        summary="a mock.patch is started and never stopped",
    )


def mock_assignment(v: Variant) -> Draft:
    word = v.rng.choice(("Hello", "Welcome", "Hi"))
    src = _t(
        """
        def _greeting():
            return "$word"


        def greet(name):
            return f"{_greeting()}, {name}!"
        """,
        v,
        word=word,
    ) + _distract_src(v)
    head = _t(
        """
        from $pkg import $mod


        def test_greet():
            assert $mod.greet("$key") == "$word, $key!"


        """,
        v,
        word=word,
    )
    polluter_old = _t(
        """
        def test_greet_custom():
            $mod._greeting = lambda: "Yo"
            assert $mod.greet("x") == "Yo, x!"
        """,
        v,
    )
    polluter_new = _t(
        """
        def test_greet_custom(monkeypatch):
            monkeypatch.setattr($mod, "_greeting", lambda: "Yo")
            assert $mod.greet("x") == "Yo, x!"
        """,
        v,
    )
    dt = _distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=head + polluter_old + dt,
        test_fixed=head + polluter_new + dt,
        target="test_greet",
        fault_file="test",
        fault_func="test_greet_custom",
        mutant=('return f"{_greeting()}, {name}!"', 'return f"{_greeting()} {name}!"'),
        summary="a test replaces a module attribute by assignment and never restores it",
    )


TEMPLATES: dict[str, dict[str, Callable[[Variant], Draft]]] = {
    "async_wait": {"unawaited": async_unawaited, "fire_and_forget": async_fire_and_forget},
    "concurrency": {"lost_update": concurrency_lost_update, "worker_pool": concurrency_worker_pool},
    "test_order_dependency": {"polluter": order_polluter, "brittle": order_brittle},
    "non_idempotent": {"register": nonidem_register, "init": nonidem_init},
    "resource_leak": {"pool": leak_pool},
    "shared_state": {"mutable_default": shared_mutable_default, "class_attr": shared_class_attr},
    "network": {"remote_default": network_remote_default, "broker": network_broker},
    "platform_dependency": {"tz": platform_tz, "locale": platform_locale, "clock": platform_clock},
    "nondeterminism": {"tiebreak": nondet_tiebreak, "shuffle": nondet_sample},
    "import_side_effect": {"salt": import_salt},
    "module_cache_pollution": {"lru": cache_lru, "mutable_result": cache_mutable_result},
    "fixture_scope_leak": {"module_scope": fixture_module_scope},
    "mock_residue": {"unstopped": mock_unstopped, "assignment": mock_assignment},
}
