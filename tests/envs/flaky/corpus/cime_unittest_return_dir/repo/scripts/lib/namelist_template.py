TEMPLATE = "&cime_pes\n/\n"
