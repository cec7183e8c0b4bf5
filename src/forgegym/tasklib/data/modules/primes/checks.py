def cases(rng):
    out = []
    for _ in range(14):
        n = rng.randint(0, 200)
        out.append(("is_prime", [n]))
        out.append(("primes_upto", [rng.randint(0, 60)]))
        out.append(("factorize", [rng.randint(2, 500)]))
        out.append(("next_prime", [n]))
    out += [("is_prime", [4]), ("is_prime", [9]), ("is_prime", [25]), ("factorize", [0]), ("primes_upto", [2])]
    return out
