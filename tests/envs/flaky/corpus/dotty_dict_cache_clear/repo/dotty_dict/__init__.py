from dotty_dict.dotty_dict import Dotty, dotty
