from slugs import camel_to_snake, slugify, snake_to_camel


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  --a  b--") == "a-b"


def test_camel_to_snake():
    assert camel_to_snake("parseHTTPResponse") == "parse_http_response"
    assert camel_to_snake("simple") == "simple"
    assert camel_to_snake("HTMLParser") == "html_parser"


def test_snake_to_camel():
    assert snake_to_camel("max_line_length") == "maxLineLength"
    assert snake_to_camel("__a__b") == "aB"
    assert snake_to_camel("x_y", upper_first=True) == "XY"
    assert snake_to_camel("___") == ""
