"""Classical ciphers over ASCII letters."""


def shift_char(ch, k):
    """Shift a letter by ``k`` places, keeping case; other characters are unchanged."""
    if "a" <= ch <= "z":
        return chr((ord(ch) - ord("a") + k) % 26 + ord("a"))
    if "A" <= ch <= "Z":
        return chr((ord(ch) - ord("A") + k) % 26 + ord("A"))
    return ch


def caesar(text, k):
    """Caesar cipher with shift ``k``."""
    return "".join(shift_char(ch, k) for ch in text)


def vigenere(text, key, decrypt=False):
    """Vigenere cipher; the key advances only on letters."""
    if not key.isalpha():
        raise ValueError("key must be letters")
    out = []
    i = 0
    for ch in text:
        if ch.isalpha() and ch.isascii():
            k = ord(key[i % len(key)].lower()) - ord("a")
            out.append(shift_char(ch, -k if decrypt else k))
            i += 1
        else:
            out.append(ch)
    return "".join(out)


def atbash(text):
    """Mirror the alphabet (a<->z)."""
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append(chr(ord("z") - (ord(ch) - ord("a"))))
        elif "A" <= ch <= "Z":
            out.append(chr(ord("Z") - (ord(ch) - ord("A"))))
        else:
            out.append(ch)
    return "".join(out)
