"""What the user hands glmodel about a cluster: the cluster file, Ansible inventories, and the strict YAML
reading both share."""
