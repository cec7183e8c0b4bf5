"""Pagination arithmetic."""


def page_count(total, per_page):
    """Number of pages needed for ``total`` items (at least 1)."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return max(1, (total + per_page - 1) // per_page)


def page_items(items, page, per_page):
    """Items on 1-based ``page``; an out-of-range page raises ``IndexError``."""
    pages = page_count(len(items), per_page)
    if page < 1 or page > pages:
        raise IndexError("page out of range")
    start = (page - 1) * per_page
    return items[start : start + per_page]


def page_window(current, pages, width):
    """Up to ``width`` consecutive page numbers around ``current``, clamped to 1..pages."""
    half = width // 2
    start = max(1, current - half)
    end = min(pages, start + width - 1)
    start = max(1, end - width + 1)
    return list(range(start, end + 1))
