// GENERATED from labextension/src/format.ts by labextension/format-js.js (`jlpm build`).
// Do not edit: change format.ts. JPF holds its exports (formatDuration, formatBytes, ...).
const JPF = ((exports) => {
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.BYTE_UNITS = exports.UNKNOWN = void 0;
exports.pyFixed = pyFixed;
exports.pyRound = pyRound;
exports.formatDuration = formatDuration;
exports.formatBytes = formatBytes;
exports.formatChange = formatChange;
exports.formatCount = formatCount;
exports.escapeHtml = escapeHtml;
exports.formatRelativeTime = formatRelativeTime;
exports.formatTimestamp = formatTimestamp;
exports.pageLabel = pageLabel;
exports.UNKNOWN = '–';
exports.BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
function pyFixed(x, digits) {
    if (!Number.isFinite(x) || Math.abs(x) >= 1e21) {
        return x.toFixed(digits);
    }
    if (Object.is(x, -0)) {
        return '-' + (0).toFixed(digits);
    }
    const a = Math.abs(x);
    const y = a * Math.pow(10, digits);
    if (y < 1e15 && Math.abs(y - Math.floor(y) - 0.5) > 1e-7) {
        return x.toFixed(digits);
    }
    const fixed = x.toFixed(digits);
    const exact = a.toFixed(100);
    const point = exact.indexOf('.');
    const rest = exact.slice(point + 1 + digits);
    if (!/^50*$/.test(rest)) {
        return fixed;
    }
    const kept = exact.slice(0, point + 1 + digits).replace(/\.$/, '');
    if (Number(kept[kept.length - 1]) % 2 === 0) {
        return (x < 0 ? '-' : '') + kept;
    }
    return fixed;
}
function pyRound(x) {
    return Number(pyFixed(x, 0));
}
function signed(negative, text, zero) {
    return negative && !zero ? '-' + text : text;
}
function finite(v) {
    return typeof v === 'number' && Number.isFinite(v);
}
function nonFinite(v) {
    if (v === null || v === undefined || Number.isNaN(v)) {
        return exports.UNKNOWN;
    }
    return v < 0 ? '-∞' : '∞';
}
function formatDuration(ms) {
    if (!finite(ms)) {
        return nonFinite(ms);
    }
    const a = Math.abs(ms);
    const whole = pyRound(a);
    if (whole < 1000) {
        return signed(ms < 0, `${whole} ms`, whole === 0);
    }
    const secs = pyFixed(a / 1000, 2);
    if (Number(secs) < 60) {
        return signed(ms < 0, `${secs} s`, false);
    }
    const two = (n) => String(n).padStart(2, '0');
    const s = pyRound(a / 1000);
    if (s < 3600) {
        return signed(ms < 0, `${Math.floor(s / 60)} min ${two(s % 60)} s`, false);
    }
    const m = pyRound(a / 60000);
    return signed(ms < 0, `${Math.floor(m / 60)} h ${two(m % 60)} min`, false);
}
function formatBytes(bytes) {
    if (!finite(bytes)) {
        return nonFinite(bytes);
    }
    const a = Math.abs(bytes);
    const whole = pyRound(a);
    if (whole < 1024) {
        return signed(bytes < 0, `${whole} B`, whole === 0);
    }
    let x = a;
    const last = exports.BYTE_UNITS.length - 1;
    for (let u = 1; u <= last; u++) {
        x /= 1024;
        const text = pyFixed(x, 1);
        if (Number(text) < 1024 || u === last) {
            return signed(bytes < 0, `${text} ${exports.BYTE_UNITS[u]}`, false);
        }
    }
    return exports.UNKNOWN;
}
function formatChange(now, old) {
    if (!old) {
        return exports.UNKNOWN;
    }
    const p = (100.0 * (now - old)) / old;
    const s = pyFixed(p, 1);
    return (p >= 0 && !s.startsWith('-') ? '+' : '') + s + '%';
}
function formatCount(n, noun = '') {
    if (!finite(n)) {
        return nonFinite(n);
    }
    const text = pyRound(n).toLocaleString('en-US');
    return noun ? `${text} ${noun}${n === 1 ? '' : 's'}` : text;
}
function escapeHtml(text) {
    return String(text !== null && text !== void 0 ? text : '')
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#x27;');
}
function formatRelativeTime(epochMs, nowMs) {
    if (epochMs === null || epochMs === undefined || !Number.isFinite(epochMs)) {
        return '';
    }
    const ago = Math.max(0, nowMs - epochMs) / 1000;
    if (ago < 5) {
        return 'just now';
    }
    if (ago < 60) {
        return `${Math.floor(ago)} s ago`;
    }
    if (ago < 3600) {
        return `${Math.floor(ago / 60)} min ago`;
    }
    if (ago < 24 * 3600) {
        return `${Math.floor(ago / 3600)} h ago`;
    }
    return formatTimestamp(epochMs);
}
function formatTimestamp(epochMs) {
    const d = new Date(epochMs);
    const p = (n) => String(n).padStart(2, '0');
    return (`${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
        `${p(d.getHours())}:${p(d.getMinutes())}`);
}
function pageLabel(offset, shown, total) {
    const n = formatCount;
    if (total <= 0 || shown <= 0) {
        return total > 0 ? `0 of ${n(total)}` : 'No runs';
    }
    return `${n(offset + 1)}–${n(offset + shown)} of ${n(total)}`;
}
return exports;
})({});
