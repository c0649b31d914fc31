#!/bin/bash
# otf2_check.sh [FAULT] [BULK_N]: builds otf2_write.c, writes an archive (out_FAULT_N/), reads it
# back with otf2-print and with the OTF2 Python bindings (otf2_count.py, Debian python3-otf2,
# which only the system /usr/bin/python3 imports) and compares the event counts with what the
# writer says it wrote. FAULT injects one mistake (see otf2_write.c). CFLAGS_EXTRA=-DNTHREADS=2
# writes two threads per rank.
set -u
cd "$(dirname "$0")" || exit 1
read -ra extra <<<"${CFLAGS_EXTRA:-}"
read -ra otf2_cflags <<<"$(pkg-config --cflags otf2)"
read -ra otf2_libs <<<"$(pkg-config --libs otf2)"
cc -std=c11 "${extra[@]}" -Wall -Wextra -pedantic "${otf2_cflags[@]}" otf2_write.c \
    "${otf2_libs[@]}" -o otf2_write || exit 1
out=out_${1:-none}_${2:-0}
rm -rf "$out"
./otf2_write "$out" "${1:-none}" "${2:-0}" >"$out.expected" 2>"$out.writer.err"
echo "writer rc=$?"
cat "$out.writer.err"
grep -v ' 0$' "$out.expected" | sort >"$out.exp"
# otf2-print names event records in capitals: map them to the OTF2 names the writer prints.
otf2-print "$out/traces.otf2" >"$out.print" 2>"$out.print.err"
echo "otf2-print rc=$?"
head -5 "$out.print.err"
awk 'NR>5 && NF>=3 && $2 ~ /^[0-9]+$/ {print $1}' "$out.print" |
    sed -e 's/^ENTER$/Enter/;s/^LEAVE$/Leave/;s/^MPI_SEND$/MpiSend/;s/^MPI_RECV$/MpiRecv/' \
        -e 's/^MPI_ISEND$/MpiIsend/;s/^MPI_ISEND_COMPLETE$/MpiIsendComplete/' \
        -e 's/^MPI_IRECV_REQUEST$/MpiIrecvRequest/;s/^MPI_IRECV$/MpiIrecv/' \
        -e 's/^MPI_COLLECTIVE_BEGIN$/MpiCollectiveBegin/;s/^MPI_COLLECTIVE_END$/MpiCollectiveEnd/' \
        -e 's/^BUFFER_FLUSH$/BufferFlush/' |
    sort | uniq -c | awk '{print $2, $1}' | sort >"$out.printcnt"
/usr/bin/python3 otf2_count.py "$out/traces.otf2" >"$out.py" 2>"$out.py.err"
echo "python rc=$?"
tail -3 "$out.py.err"
grep -v TOTAL "$out.py" | sort >"$out.pycnt"
if cmp -s "$out.exp" "$out.printcnt"; then
    echo "otf2-print counts: EXACT"
else
    echo "otf2-print counts DIFFER"
    diff "$out.exp" "$out.printcnt"
fi
if cmp -s "$out.exp" "$out.pycnt"; then
    echo "python counts: EXACT"
else
    echo "python counts DIFFER"
    diff "$out.exp" "$out.pycnt"
fi
echo "total expected: $(awk '{s+=$2} END{print s}' "$out.exp")"
