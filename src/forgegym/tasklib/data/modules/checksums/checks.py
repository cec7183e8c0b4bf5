def cases(rng):
    out = []
    for _ in range(15):
        digits = "".join(str(rng.randint(0, 9)) for _ in range(rng.randint(1, 12)))
        out.append(("luhn_valid", [digits]))
        out.append(("luhn_digit", [digits]))
        isbn = "".join(str(rng.randint(0, 9)) for _ in range(9)) + rng.choice("0123456789X")
        out.append(("isbn10_valid", [isbn]))
        out.append(("mod_checksum", [digits + "xyz", rng.choice([7, 97, 256])]))
    out += [("isbn10_valid", ["X123456789"]), ("luhn_valid", ["59"]), ("luhn_valid", ["18"])]
    return out
