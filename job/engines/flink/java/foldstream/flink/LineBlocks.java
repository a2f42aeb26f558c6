package foldstream.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * A file's lines in blocks: each record is up to {@code lines} consecutive lines (fewer once
 * it holds {@code chars} characters or more), joined by '\n', decoded as ISO-8859-1 (one
 * character per byte). The lines end where Flink's text line format ends them (Java's
 * readLine: at "\n", "\r\n" or a lone "\r"), so the blocks, split at '\n', give that format's
 * lines, in order; one record crosses to Python for many lines.
 *
 * <p>A simple stream format cannot be split: the file is one split, and a checkpoint holds the
 * blocks read, which a restored reader skips again, so a restart resumes at the same line.
 */
public final class LineBlocks extends SimpleStreamFormat<String> {
    private static final long serialVersionUID = 1L;

    private final int lines;
    private final int chars;

    public LineBlocks(int lines, int chars) {
        if (lines < 1 || chars < 1) {
            throw new IllegalArgumentException("lines and chars must be positive");
        }
        this.lines = lines;
        this.chars = chars;
    }

    @Override
    public StreamFormat.Reader<String> createReader(Configuration config, FSDataInputStream stream) {
        final BufferedReader reader =
                new BufferedReader(new InputStreamReader(stream, StandardCharsets.ISO_8859_1));
        return new StreamFormat.Reader<String>() {
            @Override
            public String read() throws IOException {
                String line = reader.readLine();
                if (line == null) {
                    return null;
                }
                StringBuilder block = new StringBuilder(line);
                for (int n = 1; n < lines && block.length() < chars; n++) {
                    line = reader.readLine();
                    if (line == null) {
                        break;
                    }
                    block.append('\n').append(line);
                }
                return block.toString();
            }

            @Override
            public void close() throws IOException {
                reader.close();
            }
        };
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }
}
