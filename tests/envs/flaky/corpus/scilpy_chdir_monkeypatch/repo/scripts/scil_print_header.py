"""usage: scil_print_header.py [-h] in_file

Print the header of an image file."""
