from breathe.master import Breathe
