"""Scenario templates of the ``concurrency`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["concurrency_lost_update", "concurrency_worker_pool"]


def concurrency_lost_update(v: Variant) -> Draft:
    n, amount = v.num(3, 4), v.num(2, 9)
    prob = v.rng.choice((0.2, 0.25, 0.3))
    src = fill(
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
    ) + distract_src(v)
    fixed = swap(
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
    test = fill(
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
    ) + distract_tests(v)
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
    src = fill(
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
    ) + distract_src(v)
    fixed = swap(src, "self.queue.put_nowait(job)", "await self.queue.put(job)")
    test = fill(
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
    ) + distract_tests(v)
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
