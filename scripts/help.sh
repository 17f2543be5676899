# scripts/help.sh — sourced first by every set-up script with the script's arguments:
# -h / --help prints the script's header comment (its lines 2 .. the first command) and exits.
case "${1:-}" in
  -h | --help)
    sed -n '2,/^[^#]/{/^[^#]/d;s/^# \{0,1\}//;p}' "$0"
    exit 0
    ;;
esac
